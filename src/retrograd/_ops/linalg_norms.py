"""torch.linalg's norms and what is measured with them: matrix_norm, norm (and torch.norm's
'nuc'), cond, matrix_rank.

All are composites of other ops, as in torch, so results carry torch's nodes (LinalgVector-
NormBackward0 for 'fro', SumBackward1 for 'nuc', AmaxBackward0 / AminBackward0 for 1, 2, inf and
their negatives).
"""

from __future__ import annotations

import math

import numpy as np

from retrograd import _errors as E
from retrograd._ops import reduction as _reduction
from retrograd._ops.linalg_checks import check_float, check_floating, check_matrix, check_square
from retrograd._ops.linalg_decompositions import _linalg_eigh, _linalg_svd, svdvals
from retrograd._ops.linalg_inverse import _linalg_inv_ex
from retrograd._tensor import Tensor
from retrograd._tensor import _wrap as wrap_array

vector_norm = _reduction.linalg_vector_norm
_MATRIX_ORDS = ("fro", "nuc")


def _wrap(d: int, nd: int) -> int:
    if not -nd <= d < nd:
        raise IndexError(E.DIM_RANGE.format(-nd, nd - 1, d))
    return d % nd


def _ord_text(ord) -> str:
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def _matrix_dims(A: Tensor, dim) -> tuple:
    name = "linalg.matrix_norm"
    if isinstance(dim, int):
        dim = (dim,)
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got "
                           + " ".join(str(d) for d in dim))
    d0, d1 = (_wrap(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _svd_reduce(A: Tensor, d0: int, d1: int, keepdim: bool, reduce) -> Tensor:
    """reduce(singular values) over the matrices spanned by dims d0, d1."""
    nd = A.dim()
    perm = [i for i in range(nd) if i not in (d0, d1)] + [d0, d1]
    moved = A.permute(perm) if perm != list(range(nd)) else A
    out = reduce(svdvals(moved))
    if not keepdim:
        return out
    inverse = [0] * nd
    for i, p in enumerate(perm):
        inverse[p] = i
    return out.unsqueeze(-1).unsqueeze(-1).permute(inverse)


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None,
                out=None) -> Tensor:
    """torch.linalg.matrix_norm: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf over two dims."""
    name = "linalg.matrix_norm"
    if out is not None:
        raise NotImplementedError(f"retrograd.{name} does not support out=")
    check_matrix(name, A)
    check_floating(name, A)  # low precision is refused only for the orders computed by SVD
    d0, d1 = _matrix_dims(A, dim)
    if dtype is not None:
        A = A.to(dtype)
    if isinstance(ord, str):
        if ord not in _MATRIX_ORDS:
            raise RuntimeError(f"{name}: Order {ord} not supported.")
        if ord == "fro":
            return vector_norm(A, 2, [d0, d1], keepdim)
        check_float(name, A)
        return _svd_reduce(A, d0, d1, keepdim, lambda s: s.sum(-1))
    p = abs(ord)
    if p not in (1, 2, math.inf):
        raise RuntimeError(f"{name}: Order {_ord_text(ord)} not supported.")
    if p == 2:
        check_float(name, A)
        return _svd_reduce(A, d0, d1, keepdim,
                           lambda s: s.amax(-1) if ord > 0 else s.amin(-1))
    if p == math.inf:  # the largest row sum is the 1-norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    sums = vector_norm(A, 1, [d0], keepdim)
    return sums.amax(d1, keepdim) if ord > 0 else sums.amin(d1, keepdim)


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, out=None,
         dtype=None) -> Tensor:
    """torch.linalg.norm: a vector norm over one dim (or all), a matrix norm over two."""
    if out is not None:
        raise NotImplementedError("retrograd.linalg.norm does not support out=")
    if isinstance(dim, int):
        dim = [dim]
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.dim() not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.dim()}D.")
        dim = list(range(A.dim()))
    if isinstance(ord, str) or len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


# --- cond, matrix_rank -----------------------------------------------------------------------

_COND_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def cond(A: Tensor, p=None, *, out=None) -> Tensor:
    """torch.linalg.cond: ||A|| ||A^-1|| in norm p (default 2: largest / smallest singular
    value); a singular matrix gives inf."""
    if out is not None:
        raise NotImplementedError("retrograd.linalg.cond does not support out=")
    if p is None:
        p = 2
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_ord_text(p)}")
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (2, -2):
        check_float("linalg.cond", A)
        s = svdvals(A)
        big, small = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (big / small if p == 2 else small / big).squeeze(-1)
    check_square(f"linalg.cond(ord={_ord_text(p)})", A)
    check_float("linalg.cond", A)
    if p == "nuc":  # through the singular values: sum(s) sum(1 / s)
        s = svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    inverse = _linalg_inv_ex(A)[0]
    # a singular matrix's failed inverse gives nan: torch reports inf
    return (matrix_norm(A, p) * matrix_norm(inverse, p)).nan_to_num_(math.inf)


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None,
                out=None) -> Tensor:
    """torch.linalg.matrix_rank: the number of singular values above
    max(atol, rtol * largest); rtol defaults to eps * max(m, n) when atol is not given."""
    from retrograd._ops.kernels.linalg_decompositions import pinv_tolerance

    if out is not None:
        raise NotImplementedError("retrograd.linalg.matrix_rank does not support out=")
    check_matrix("torch.linalg.matrix_rank", A, "input")
    check_float("torch.linalg.matrix_rank", A, "input")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol = float(atol.item()) if isinstance(atol, Tensor) else atol
    rtol = float(rtol.item()) if isinstance(rtol, Tensor) else rtol
    m, n = A.shape[-2], A.shape[-1]
    A = A.detach()  # a count: no graph
    vals = np.abs(_linalg_eigh(A, "L", False)[0]._data) if hermitian else \
        _linalg_svd(A, False, False)[1]._data
    top = vals.max(-1, keepdims=True) if vals.shape[-1] else np.zeros(vals.shape[:-1] + (1,))
    cut = pinv_tolerance(top, m, n, atol, rtol, vals.dtype)
    return wrap_array(np.asarray((vals > cut).sum(-1), np.int64))
