"""torch.linalg's products and reshaped solves: cross (and torch.cross), vecdot, diagonal,
multi_dot, vander, tensorinv, tensorsolve."""

from __future__ import annotations

from math import prod

import numpy as np

from retrograd import _dtype as D
from retrograd import _errors as E
from retrograd import _warning_site as _ws
from retrograd._dtype import legacy_name
from retrograd._numpy_names import numpy_names
from retrograd._ops import linalg as _mm
from retrograd._ops.layout import type_name
from retrograd._ops.linalg_checks import broadcast_batches, check_floating, check_same_dtype
from retrograd._ops.linalg_inverse import inv, solve
from retrograd._ops.linalg_out import with_out
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

# --- cross -----------------------------------------------------------------------------------


def _cross_forward(a, b, dim):
    shape = np.broadcast_shapes(a.shape, b.shape)
    out = np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axisa=dim, axisb=dim,
                   axisc=dim)
    return np.ascontiguousarray(out.astype(np.result_type(a, b), copy=False))


linalg_cross = op(
    "linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", _cross_forward,
    grads={"self": lambda grad, other, dim: linalg_cross(other, grad, dim=dim),
           "other": lambda grad, self, dim: linalg_cross(grad, self, dim=dim)},
    function=False, method=False)


def _check_cross(input: Tensor, other: Tensor, dim: int) -> int:
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input._data.dtype)} but found "
                           f"{type_name(other._data.dtype)}")
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = input.dim()
    if not -nd <= dim < nd:
        raise IndexError(E.DIM_RANGE.format(-nd, nd - 1, dim))
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    broadcast_batches(tuple(input.shape), tuple(other.shape))
    return dim


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """torch.linalg.cross: the cross product of 3-vectors along dim, batches broadcast."""
    if out is not None:
        raise NotImplementedError("retrograd.linalg.cross does not support out=")
    return linalg_cross(input, other, dim=_check_cross(input, other, dim))


CROSS_DIM_WARNING = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
    "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
    "agree with that of linalg.cross in a future release.")


@numpy_names
def torch_cross(input: Tensor, other: Tensor, dim: int | None = None, *, out=None) -> Tensor:
    """torch.cross / Tensor.cross: dim=None is the first dimension of size 3 (deprecated)."""
    if dim is None:
        _ws.warn(CROSS_DIM_WARNING, UserWarning, stacklevel=2)
        shape = broadcast_batches(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return cross(input, other, dim=dim, out=out)


# --- vecdot, diagonal ------------------------------------------------------------------------


def _vecdot_out_dtype(result: Tensor, out: Tensor) -> None:
    if out.dtype is not result.dtype:  # (torch's message has no space after "dtype")
        raise RuntimeError(f"linalg.vecdot: Expected out of dtype{legacy_name(result.dtype)} "
                           f"but found {legacy_name(out.dtype)}")


@with_out("linalg_vecdot", "vdot", dtype_rule=_vecdot_out_dtype)
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """torch.linalg.vecdot: sum(x * y) along dim (x conjugated; real here), in any floating
    dtype (torch's low-precision check is for the LAPACK functions, not this one)."""
    check_floating("linalg.vecdot", x)
    check_same_dtype("linalg.vecdot", x, y, "x", "y")
    return (x * y).sum(dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.linalg.diagonal: torch.diagonal with the last two dims as default."""
    return A.diagonal(offset, dim1, dim2)


# --- multi_dot -------------------------------------------------------------------------------

_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}


def _check_multi_dot(tensors: list) -> None:
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        nd = t.dim()
        if i == 0 and nd not in (1, 2):
            raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {nd}D")
        if i == n - 1 and i and nd not in (1, 2):
            raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {nd}D")
        if 0 < i < n - 1 and nd != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {nd}D")
        if t.dtype != tensors[0].dtype:
            a, b = tensors[0].dtype.name, t.dtype.name
            raise RuntimeError("multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_C_NAMES.get(a, a)} and tensor {i} {_C_NAMES.get(b, b)}")


def _chain_order(dims: list) -> list:
    """The cheapest parenthesization of a matrix chain (dims[i] x dims[i+1] for matrix i):
    split[i][j] is where the product of matrices i..j divides."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best: int | None = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, k
            assert best is not None  # j > i: at least one split
            cost[i][j] = best
    return split


def multi_dot(tensors, *, out=None) -> Tensor:
    """torch.linalg.multi_dot: a chain of matrix products in the cheapest order; the first
    (last) operand may be a row (column) vector."""
    if out is not None:
        raise NotImplementedError("retrograd.linalg.multi_dot does not support out=")
    tensors = list(tensors)
    _check_multi_dot(tensors)
    first, last = tensors[0], tensors[-1]
    shape = ((first.shape[0],) if first.dim() == 2 else ()) + \
        ((last.shape[1],) if last.dim() == 2 else ())
    mats = list(tensors)
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    mm = _mm.mm
    if len(mats) == 2:
        result = mm(mats[0], mats[1])
    elif len(mats) == 3:
        a, b = mats[0].shape
        c, d = mats[2].shape
        # (AB)C costs a c (b + d), A(BC) costs b d (a + c)
        result = (mm(mats[0], mm(mats[1], mats[2])) if a * c * (b + d) > b * d * (a + c)
                  else mm(mm(mats[0], mats[1]), mats[2]))
    else:
        dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
        split = _chain_order(dims)

        def product(i: int, j: int) -> Tensor:
            if i == j:
                return mats[i]
            k = split[i][j]
            return mm(product(i, k), product(k + 1, j))

        result = product(0, len(mats) - 1)
    return result.view(shape)


# --- vander ----------------------------------------------------------------------------------


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """torch.linalg.vander: columns x^0, x^1, ..., x^(N-1) (N defaults to x.shape[-1])."""
    from retrograd._ops.shape import cat

    dt = x.dtype
    if dt is D.bool or dt.name in ("float16", "bfloat16"):
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {legacy_name(dt)}")
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension. Got 0 "
                           "dimensions.")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = x.new_ones(tuple(x.shape) + (1,))
    powers = x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)).cumprod(-1)
    return cat([ones, powers], -1)


# --- tensorinv, tensorsolve ------------------------------------------------------------------


def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """torch.linalg.tensorinv: the inverse for tensordot over `ind` dims."""
    if out is not None:
        raise NotImplementedError("retrograd.linalg.tensorinv does not support out=")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    rows, cols = prod(shape[:ind]), prod(shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])


def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:
    """torch.linalg.tensorsolve: X with tensordot(A, X, X.dim()) = B."""
    if out is not None:
        raise NotImplementedError("retrograd.linalg.tensorsolve does not support out=")
    if dims is not None:
        nd = A.dim()
        moved = [d % nd for d in dims]
        A = A.permute([i for i in range(nd) if i not in moved] + moved)
    result_shape = tuple(A.shape[B.dim():])
    rows = prod(B.shape)
    cols = prod(result_shape)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(result_shape)


register("cross", torch_cross, method=True)
