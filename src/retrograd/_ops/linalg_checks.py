"""Argument checks the torch.linalg functions share, with torch's messages."""

from __future__ import annotations

from retrograd._ops.layout import type_name
from retrograd._tensor import Tensor

_LOW_PRECISION = ("float16", "bfloat16")


def check_floating(name: str, A: Tensor, what: str = "input") -> None:
    """A floating (or complex) dtype, of any precision."""
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as {what}. "
                           f"Got {type_name(A._data.dtype)}")


def check_float(name: str, A: Tensor, what: str = "input") -> None:
    """A floating dtype LAPACK handles (float32 / float64)."""
    check_floating(name, A, what)
    if A.dtype.name in _LOW_PRECISION:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. "
                           f"Got {type_name(A._data.dtype)}")


def check_matrix(name: str, A: Tensor, what: str = "A") -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def check_square(name: str, A: Tensor, what: str = "A") -> None:
    check_matrix(name, A, what)
    m, n = A.shape[-2], A.shape[-1]
    if m != n:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are "
                           f"{m} by {n} matrices")


def check_square_float(name: str, A: Tensor) -> None:
    """torch's order: dimensions, squareness, then dtype."""
    check_square(name, A)
    check_float(name, A)


def check_same_dtype(name: str, A: Tensor, B: Tensor, a: str = "A", b: str = "B") -> None:
    if A.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected {a} and {b} to have the same dtype, but found {a} "
                           f"of type {type_name(A._data.dtype)} and {b} of type "
                           f"{type_name(B._data.dtype)} instead")


def broadcast_batches(a: tuple, b: tuple) -> tuple:
    """The broadcast of two batch shapes, or torch's error naming the first mismatch."""
    from retrograd import _errors as E

    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(E.BROADCAST.format(x, y, i))
        out.append(y if x == 1 else x)
    return tuple(out)
