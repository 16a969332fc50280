"""torch.linalg's LU family: lu_factor / lu_factor_ex, lu, lu_solve (A = P L U with partial
pivoting, LAPACK's getrf, packed as L below the diagonal and U on and above it).

Gradients cover square, wide and tall matrices.
"""

from __future__ import annotations

from retrograd._ops import linalg as _mm
from retrograd._ops.kernels import linalg_solvers as K
from retrograd._ops.layout import type_name
from retrograd._ops.linalg_checks import broadcast_batches, check_matrix, check_same_dtype
from retrograd._ops.linalg_inverse import _solve_triangular
from retrograd._ops.linalg_out import with_out
from retrograd._ops.linalg_returns import return_types
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

matmul = _mm.matmul


# P from the pivots, as an op of its own so that vmap batches it (the kernel takes leading
# batch dimensions); no gradient: pivots are integers
_lu_permutation = op(
    "_linalg_lu_permutation(Tensor pivots, int m) -> Tensor",
    K.lu_permutation,
    function=False, method=False)


def _unpack(LU: Tensor, pivots: Tensor) -> tuple:
    """(P, L, U) from a packed m x n factorization: L is m x k unit lower, U is k x n upper,
    k = min(m, n)."""
    from retrograd._ops.creation import eye

    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    P = _lu_permutation(pivots, m).to(LU.dtype)
    L = LU[..., :, :k].tril(-1) + eye(m, k, dtype=LU.dtype)
    return P, L, LU[..., :k, :].triu(), k


def _square_part(M: Tensor, L: Tensor, U: Tensor) -> Tensor:
    """L^-T M U^-T for unit lower L and upper U (both square)."""
    Y = _solve_triangular(L.mT, M, upper=True, unitriangular=True)
    return _solve_triangular(U.mT, Y, upper=False, left=False)


def _factor_grad(gL: Tensor | None, gU: Tensor | None, P: Tensor, L: Tensor,
                 U: Tensor) -> Tensor:
    """A = P L U. Square: with X = L^-1 P^T dA U^-1, L^-1 dL is X's strict lower part and
    dU U^-1 its upper part, so gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T.
    Wide (U = [U1 U2]): U2 = L^-1 P^T A2 adds -gU2 U2^T to L^T gL and gives A2 P L^-T gU2.
    Tall (L = [L1; L2]): L2 = (P^T A)2 U^-1 adds -L2^T gL2 to gU U^T and gives gL2 U^-T."""
    from retrograd._ops.shape import cat

    gL = L.new_zeros(tuple(L.shape)) if gL is None else gL
    gU = U.new_zeros(tuple(U.shape)) if gU is None else gU
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        M = matmul(L.mT, gL).tril(-1) + matmul(gU, U.mT).triu()
        return matmul(P, _square_part(M, L, U))
    if m < n:
        U1, U2, gU1, gU2 = U[..., :k], U[..., k:], gU[..., :k], gU[..., k:]
        M = (matmul(L.mT, gL) - matmul(gU2, U2.mT)).tril(-1) + matmul(gU1, U1.mT).triu()
        gA2 = _solve_triangular(L.mT, gU2, upper=True, unitriangular=True)
        return matmul(P, cat([_square_part(M, L, U1), gA2], -1))
    L1, L2, gL1, gL2 = L[..., :k, :], L[..., k:, :], gL[..., :k, :], gL[..., k:, :]
    M = matmul(L1.mT, gL1).tril(-1) + (matmul(gU, U.mT) - matmul(L2.mT, gL2)).triu()
    gB2 = _solve_triangular(U.mT, gL2, upper=False, left=False)
    return matmul(P, cat([_square_part(M, L1, U), gB2], -2))


def _lu_factor_grad(grad: Tensor, LU: Tensor, pivots: Tensor) -> Tensor:
    P, L, U, k = _unpack(LU, pivots)
    return _factor_grad(grad[..., :, :k].tril(-1), grad[..., :k, :].triu(), P, L, U)


def _lu_factor_forward(a, pivot, check_errors):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    lu, piv, info = K.lu_factor(a)
    if check_errors:
        K.raise_for_info("torch.linalg.lu_factor_ex", info, K.LU_SINGULAR, True, RuntimeError)
    return lu, piv, info


_linalg_lu_factor_ex = op(
    "linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> "
    "(Tensor LU, Tensor pivots, Tensor info)", _lu_factor_forward,
    grads={"A": lambda grad, LU, pivots: _lu_factor_grad(grad, LU, pivots)},
    function=False, method=False)


def _check_lu(name: str, A: Tensor) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not A.dtype.is_floating_point or A.dtype.name in ("float16", "bfloat16"):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for "
                                  f"'{type_name(A._data.dtype)}'")


@with_out("linalg_lu_factor_ex", "linalg_lu_factor_ex", 3, fields=("LU", "pivots", "info"))
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False,
                 out=None) -> tuple:
    """torch.linalg.lu_factor_ex: (LU, pivots, info)."""
    _check_lu("torch.lu_factor", A)
    return return_types.linalg_lu_factor_ex(
        _linalg_lu_factor_ex(A, pivot=pivot, check_errors=check_errors))


@with_out("linalg_lu_factor", "linalg_lu_factor_ex", 2, fields=("LU", "pivots"))
def lu_factor(A: Tensor, *, pivot: bool = True, out=None) -> tuple:
    """torch.linalg.lu_factor: (LU, pivots); LinAlgError when U has a zero on its diagonal."""
    _check_lu("torch.lu_factor", A)
    LU, pivots, info = _linalg_lu_factor_ex(A, pivot=pivot)
    K.raise_for_info("torch.linalg.lu_factor", info._data, K.LU_SINGULAR, True, RuntimeError)
    return return_types.linalg_lu_factor((LU, pivots))


def _lu_forward(a, pivot):
    lu, piv, _ = _lu_factor_forward(a, pivot, False)
    p, lower, upper = K.lu_unpack(lu, piv)
    return p, lower.copy(), upper.copy()


def _lu_grad(grads, P: Tensor, L: Tensor, U: Tensor) -> Tensor | None:
    _, gL, gU = grads
    if gL is None and gU is None:
        return None
    return _factor_grad(gL, gU, P, L, U)


_linalg_lu = op("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)",
                _lu_forward, grads={"A": _lu_grad}, differentiable_outputs=(False, True, True),
                function=False, method=False)


@with_out("linalg_lu", "linalg_lu", 3, fields=("P", "L", "U"))
def lu(A: Tensor, *, pivot: bool = True, out=None) -> tuple:
    """torch.linalg.lu: (P, L, U) with A = P L U."""
    _check_lu("linalg.lu", A)
    return return_types.linalg_lu(_linalg_lu(A, pivot=pivot))


def _lu_solve_grads(grads, LU: Tensor, pivots: Tensor, result: Tensor, left: bool,
                    adjoint: bool, output_mask):
    """gB solves with the transposed system; gA follows from X = A^-1 B (or its transposed /
    right-hand forms) and goes to the packed factors through A = P L U."""
    g = grads[0]
    if g is None:
        return None, None
    gB = _linalg_lu_solve(LU, pivots, g, left=left, adjoint=not adjoint)
    if not output_mask[0]:
        return None, gB
    X = result
    if left:
        gA = -matmul(X, gB.mT) if adjoint else -matmul(gB, X.mT)
    else:
        gA = -matmul(gB.mT, X) if adjoint else -matmul(X.mT, gB)
    P, L, U, _ = _unpack(LU, pivots)
    PtgA = matmul(P.mT, gA)
    gLU = matmul(PtgA, U.mT).tril(-1) + matmul(L.mT, PtgA).triu()
    return gLU, gB


_linalg_lu_solve = op(
    "linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, "
    "bool adjoint=False) -> Tensor", K.lu_solve,
    grads={"LU, B": _lu_solve_grads}, function=False, method=False)


@with_out("linalg_lu_solve", "linalg_lu_solve")
def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
             out=None) -> Tensor:
    """torch.linalg.lu_solve: X with AX = B (or XA = B, or with A^T) from lu_factor's result."""
    name = "linalg.lu_solve"
    check_matrix(name, LU, "LU")
    check_matrix(name, B, "B")
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(f"torch.{name}: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {n} matrices")
    check_same_dtype(name, LU, B, "LU", "B")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    broadcast_batches(tuple(LU.shape[:-2]), tuple(B.shape[:-2]))
    return _linalg_lu_solve(LU, pivots, B, left=left, adjoint=adjoint)


# --- lu_unpack -------------------------------------------------------------------------------


def _lu_unpack_forward(lu, pivots, unpack_data, unpack_pivots):
    import numpy as np

    p, lower, upper = K.lu_unpack(lu, pivots)
    empty = np.zeros((0,), lu.dtype)
    return (np.ascontiguousarray(p) if unpack_pivots else empty,
            np.ascontiguousarray(lower) if unpack_data else empty,
            np.ascontiguousarray(upper) if unpack_data else empty)


def _lu_unpack_grad(grads, LU_data: Tensor) -> Tensor | None:
    """L's strict lower part and U's upper part are LU's own entries."""
    from retrograd._ops.padding import constant_pad_nd

    _, gL, gU = grads
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    out = None
    if gL is not None:  # m x k, padded to n columns
        out = constant_pad_nd(gL.tril(-1), [0, n - k])
    if gU is not None:  # k x n, padded to m rows
        part = constant_pad_nd(gU.triu(), [0, 0, 0, m - k])
        out = part if out is None else out + part
    return out


_lu_unpack = op(
    "lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, "
    "bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)", _lu_unpack_forward,
    grads={"LU_data": _lu_unpack_grad}, differentiable_outputs=(False, True, True),
    function=False, method=False)


@with_out("lu_unpack", "lu_unpack", 3, fields=("P", "L", "U"))
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True, *, out=None) -> tuple:
    """torch.lu_unpack: (P, L, U) from lu_factor's packed result."""
    check_matrix("torch.lu_unpack", LU_data, "LU_data")
    return return_types.lu_unpack(_lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots))


register("lu_unpack", lu_unpack)
