"""torch's composite functions for numerical work, written on the ops as torch writes them
(so their nodes are torch's): column_stack, trapezoid / trapz / cumulative_trapezoid,
unravel_index, chain_matmul and the deprecated frobenius_norm / nuclear_norm."""

from __future__ import annotations

import itertools
import numbers
import operator
from collections.abc import Sequence
from typing import Any

from retrograd._dims import wrap_dim
from retrograd._numpy_names import numpy_names
from retrograd._ops.arg_check import check_tensor_list
from retrograd._ops.registry import register
from retrograd._ops.scalar_overloads import div_scalar, mul_scalar
from retrograd._tensor import Tensor
from retrograd._warn_always import warn_once


def _ns() -> Any:
    import retrograd

    return retrograd


def column_stack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """Scalars and vectors become columns; matrices and higher stay; all joined along dim 1."""
    check_tensor_list("column_stack", tensors)
    if len(tensors) == 0:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    cols = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    result = _ns().hstack(cols)
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result


# --- trapezoid rule ---------------------------------------------------------------------------

TRAPEZOID_SIGNATURES = ("{}() received an invalid combination of arguments - got ({}), but "
                        "expected one of:\n * (Tensor y, Tensor x, *, int dim = -1)\n * (Tensor "
                        "y, *, Number dx = 1, int dim = -1)\n")


def _check_y(name: str, y: Tensor) -> None:
    if y.dtype == _ns().bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")


def _bad_args(name: str, y: Any, x: Any, dx: Any) -> TypeError:
    got = [type(y).__name__ if not isinstance(y, Tensor) else "Tensor"]
    if x is not None:
        got.append("Tensor" if isinstance(x, Tensor) else type(x).__name__)
    if dx is not None:
        got.append(f"dx={type(dx).__name__}")
    return TypeError(TRAPEZOID_SIGNATURES.format(name, ", ".join(got)))


def _reduced_zeros(y: Tensor, dim: int) -> Tensor:
    """torch's zeros_like_except(y, dim): the integral of no samples, in y's own dtype."""
    shape = list(y.shape)
    del shape[dim]
    return _ns().zeros(shape, dtype=y.dtype)


def _spacing(x: Tensor, y: Tensor, dim: int, name: str) -> Tensor:
    """x's differences along dim, shaped to broadcast against y's neighbour sums."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        x = x.view(shape)
        dim_x = dim
    else:
        dim_x = dim - y.dim() + x.dim() if x.dim() < y.dim() else dim
    later, earlier = _neighbours(x, dim_x)
    return later - earlier


def _pair_sums(y: Tensor, dim: int) -> Tensor:
    later, earlier = _neighbours(y, dim)
    return later + earlier


def _neighbours(t: Tensor, dim: int) -> tuple:
    """(t[1:], t[:-1]) along dim: slices, as torch's (no samples give no pairs)."""
    lead = (slice(None),) * dim
    return t[lead + (slice(1, None),)], t[lead + (slice(0, -1),)]


@numpy_names
def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoid rule along dim: with sample points x, or a constant spacing dx."""
    return _trapezoid("trapezoid", y, x, dx, dim)


def _trapezoid(name: str, y: Tensor, x: Any, dx: Any, dim: int) -> Tensor:
    if not isinstance(y, Tensor) or (x is not None and (not isinstance(x, Tensor)
                                                        or dx is not None)):
        raise _bad_args(name, y, x, dx)
    _check_y("trapezoid", y)
    d = wrap_dim(dim, y.dim())
    if x is None:
        step = 1 if dx is None else dx
        if y.shape[d] == 0:
            return _reduced_zeros(y, d)
        # the sum of all samples less half the two ends, times the spacing
        return mul_scalar(y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5, step)
    if y.shape[d] == 0:
        if x.dim() == 1 and x.shape[0] != 0:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        return _reduced_zeros(y, d)
    return div_scalar((_pair_sums(y, d) * _spacing(x, y, d, "trapezoid")).sum(d), 2.0)


@numpy_names
def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    return _trapezoid("trapz", y, x, dx, dim)


@numpy_names
def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoid sums along dim (one fewer than the samples)."""
    name = "cumulative_trapezoid"
    if not isinstance(y, Tensor) or (x is not None and (not isinstance(x, Tensor)
                                                        or dx is not None)):
        raise _bad_args(name, y, x, dx)
    _check_y(name, y)
    d = wrap_dim(dim, y.dim())
    if x is None:
        step = 1 if dx is None else dx
        return mul_scalar(_pair_sums(y, d), step / 2.0).cumsum(d)
    return div_scalar((_pair_sums(y, d) * _spacing(x, y, d, name)).cumsum(d), 2.0)


# --- unravel_index ----------------------------------------------------------------------------


def unravel_index(indices: Tensor, shape: Any) -> tuple:
    """The coordinates, one tensor per dim of `shape`, of flat indices into that shape."""
    ns = _ns()
    if indices.dtype.is_floating_point or indices.dtype == ns.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (int(shape),)
    elif isinstance(shape, Sequence):
        for n in shape:
            if not isinstance(n, int):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                                f"{type(n)}")
        shape = tuple(shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    # the flat size of one step along each dim
    steps = list(itertools.accumulate(reversed(shape[1:] + (1,)), operator.mul))[::-1]
    coords = indices.unsqueeze(-1).floor_divide(ns.tensor(steps, dtype=ns.int64))
    return (coords % ns.tensor(shape, dtype=ns.int64)).unbind(-1)


# --- deprecated linear algebra ----------------------------------------------------------------

CHAIN_MATMUL = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                "release. Use torch.linalg.multi_dot instead, which accepts a list of two or more "
                "tensors rather than multiple parameters.")
FROBENIUS = ("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will "
             "be removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, "
             "keepdim)` instead")
NUCLEAR = ("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
           "removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, "
           "keepdim)` instead")



def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """Deprecated: the product of the matrices, as linalg.multi_dot computes it."""
    warn_once("chain_matmul", CHAIN_MATMUL)
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        result = matrices[0].clone()
    else:
        result = _ns().linalg.multi_dot(list(matrices))
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result


@numpy_names
def frobenius_norm(input: Tensor, dim: Any = (), keepdim: bool = False, *,
                   out: Tensor | None = None) -> Tensor:
    warn_once("frobenius_norm", FROBENIUS)
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    return _ns().linalg.vector_norm(input, 2.0, dims or None, keepdim, out=out)


@numpy_names
def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False, *,
                 out: Tensor | None = None) -> Tensor:
    warn_once("nuclear_norm", NUCLEAR)
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim) given by position
        dim, keepdim = None, dim
    if dim is None:
        dim = (-2, -1)
    return _ns().linalg.matrix_norm(input, "nuc", tuple(dim), keepdim, out=out)


for _f in (column_stack, trapezoid, trapz, cumulative_trapezoid, unravel_index, chain_matmul,
           frobenius_norm, nuclear_norm):
    register(_f.__name__, _f)
