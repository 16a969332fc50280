"""NumPy kernels of the torch.linalg solvers: LU with partial pivoting, inverse, determinant,
solve, triangular solve and Cholesky, each on a batch of matrices (*, m, n).

Results are laid out as LAPACK writes them (each matrix column by column), as torch's are.
NumPy's LAPACK wrappers raise on a singular or indefinite input without saying where, so the
kernels recompute the failing position (LAPACK's `info`) with the partial-pivoting LU below;
that loop only runs on inputs that already failed, or for lu_factor itself.
"""

from __future__ import annotations

import math

import numpy as np


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix the factorization cannot handle."""


LinAlgError.__module__ = "retrograd.linalg"

INV_SINGULAR = ("The diagonal element {} is zero, the inversion could not be completed because "
                "the input matrix is singular.")
SOLVE_SINGULAR = "The solver failed because the input matrix is singular."
NOT_PD = ("The factorization could not be completed because the input is not positive-definite "
          "(the leading minor of order {} is not positive-definite).")
LU_SINGULAR = ("U[{},{}] is zero and using it on lu_solve would result in a division by zero. If "
               "you still want to perform the factorization, consider calling linalg.lu(A, pivot) "
               "or linalg.lu_factor_ex(A, pivot)")


def column_major(a: np.ndarray) -> np.ndarray:
    """a with each matrix stored column by column (LAPACK's layout, so torch's strides); a
    fresh buffer, so size-1 dims get the canonical strides too."""
    out = np.empty(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    out[...] = np.swapaxes(a, -1, -2)
    return np.swapaxes(out, -1, -2)


def raise_for_info(name: str, info: np.ndarray, message: str, two_indices: bool = False,
                   error: type = LinAlgError) -> None:
    """torch's error for the first failed matrix of a batch (its flat index is named)."""
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    if not bad.size:
        return
    i = int(bad[0])
    code = int(flat[i])
    text = message.format(code, code) if two_indices else message.format(code)
    batch = f"(Batch element {i}): " if info.ndim else ""
    raise error(f"{name}: {batch}{text}")


def lu_factor(a: np.ndarray) -> tuple:
    """LAPACK getrf on a batch: (LU, 1-based int32 pivots, int32 info), row swaps as LAPACK
    picks them (the largest magnitude in the column; info is the first exactly-zero pivot)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    # (the batch count spelled out: with an empty matrix, -1 would be ambiguous)
    lu = np.array(a, dtype=a.dtype, copy=True).reshape((math.prod(batch), m, n))
    count = lu.shape[0]
    piv = np.empty((count, k), np.int32)
    info = np.zeros(count, np.int32)
    rows = np.arange(count)
    for j in range(k):
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        top = lu[rows, j].copy()
        lu[rows, j] = lu[rows, p]
        lu[rows, p] = top
        pivot = lu[:, j, j]
        zero = pivot == 0
        info[(info == 0) & zero] = j + 1
        # a zero pivot leaves a zero column below it: nothing to eliminate
        lu[:, j + 1:, j] /= np.where(zero, 1, pivot)[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return (column_major(lu.reshape(batch + (m, n))), piv.reshape(batch + (k,)),
            info.reshape(batch))


def _info_of_singular(a: np.ndarray) -> np.ndarray:
    return lu_factor(a)[2]


def _per_matrix(fn, a: np.ndarray, ok: np.ndarray, out: np.ndarray, *rest) -> np.ndarray:
    """fn on the matrices of a batch that factor (ok), nan for the others."""
    out[...] = np.nan
    if ok.ndim == 0:
        if ok:
            out[...] = fn(a, *rest)
        return out
    sel = np.nonzero(ok)
    if sel[0].size:
        out[sel] = fn(a[sel], *(r[sel] for r in rest))
    return out


def _with_info(fn, a: np.ndarray, info_of, message: str, check_errors: bool,
               name: str) -> tuple:
    """(fn over the batch of matrices a, torch's info): when LAPACK fails for some matrix,
    info_of says which, torch's error is raised if asked, and the others are computed one by
    one (the failed ones left uninitialised, as torch leaves them)."""
    info = np.zeros(a.shape[:-2], np.int32)
    if a.size == 0:
        return np.empty_like(a), info
    try:
        out = fn(a)
    except np.linalg.LinAlgError:
        info = info_of(a)
        if check_errors:
            raise_for_info(name, info, message)
        out = _per_matrix(fn, a, info == 0, np.empty_like(a))
    return out.astype(a.dtype, copy=False), info


def inv_ex(a: np.ndarray, check_errors: bool, name: str = "linalg.inv_ex") -> tuple:
    inv, info = _with_info(np.linalg.inv, a, _info_of_singular, INV_SINGULAR, check_errors,
                           name)
    return column_major(inv), info


def det(a: np.ndarray) -> np.ndarray:
    if a.size == 0:
        return np.ones(a.shape[:-2], a.dtype)
    return np.asarray(np.linalg.det(a), a.dtype)


def slogdet(a: np.ndarray) -> tuple:
    if a.size == 0:
        return np.ones(a.shape[:-2], a.dtype), np.zeros(a.shape[:-2], a.dtype)
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign, a.dtype), np.asarray(logabs, a.dtype)


def solve_ex(a: np.ndarray, b: np.ndarray, left: bool, vector: bool, check_errors: bool,
             name: str = "torch.linalg.solve_ex") -> tuple:
    """X with AX = B (left) or XA = B; `vector`: B is a (batch of) vector(s)."""
    if vector:
        b = b[..., None]
    if not left:  # XA = B is A^T X^T = B^T
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    info = np.zeros(batch, np.int32)
    a_full = np.broadcast_to(a, batch + a.shape[-2:])
    b_full = np.broadcast_to(b, batch + b.shape[-2:])
    if a.size == 0 or b.size == 0:
        x = np.zeros(b_full.shape, np.result_type(a, b))
    else:
        try:
            x = np.linalg.solve(a_full, b_full)
        except np.linalg.LinAlgError:
            info = _info_of_singular(np.ascontiguousarray(a_full))
            if check_errors:
                raise_for_info(name, info, SOLVE_SINGULAR)
            x = _per_matrix(np.linalg.solve, a_full, info == 0, np.empty(b_full.shape,
                                                                           b_full.dtype), b_full)
    x = x.astype(a.dtype, copy=False)
    if vector:
        # torch solves a batch of vectors as one matrix per batch: its layout
        return column_major(x[..., 0]) if x.ndim > 2 else np.ascontiguousarray(x[..., 0]), info
    return (column_major(x) if left else np.ascontiguousarray(np.swapaxes(x, -1, -2))), info


def solve_triangular(a: np.ndarray, b: np.ndarray, upper: bool, left: bool,
                     unitriangular: bool) -> np.ndarray:
    """X with AX = B (left) or XA = B, A triangular; the other triangle of A is not read."""
    tri = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        n = a.shape[-1]
        tri = tri.copy()
        tri[..., range(n), range(n)] = 1
    if not left:
        tri, b = np.swapaxes(tri, -1, -2), np.swapaxes(b, -1, -2)
    batch = np.broadcast_shapes(tri.shape[:-2], b.shape[:-2])
    b_full = np.broadcast_to(b, batch + b.shape[-2:])
    if tri.size == 0 or b.size == 0:
        x = np.zeros(b_full.shape, a.dtype)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            x = _triangular_substitution(np.broadcast_to(tri, batch + tri.shape[-2:]), b_full,
                                         upper != (not left))
    x = x.astype(a.dtype, copy=False)
    return column_major(x if left else np.swapaxes(x, -1, -2))


def _triangular_substitution(t: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    """Forward / back substitution, one row per step over the whole batch (a zero on the
    diagonal gives inf / nan as LAPACK's trtrs would not check either)."""
    n = t.shape[-1]
    x = np.zeros(b.shape, np.result_type(t, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        acc = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, :], x)
        x[..., i, :] = acc / t[..., i, i][..., None]
    return x


def cholesky_ex(a: np.ndarray, upper: bool, check_errors: bool,
                name: str = "linalg.cholesky_ex") -> tuple:
    low, info = _with_info(np.linalg.cholesky, a, _cholesky_info, NOT_PD, check_errors, name)
    return column_major(np.swapaxes(low, -1, -2) if upper else low), info


def _cholesky_info(a: np.ndarray) -> np.ndarray:
    """The order of the first leading minor that is not positive-definite, per matrix."""
    flat = a.reshape((-1,) + a.shape[-2:])
    info = np.zeros(flat.shape[0], np.int32)
    for i, m in enumerate(flat):
        for order in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:order, :order])
            except np.linalg.LinAlgError:
                info[i] = order
                break
    return info.reshape(a.shape[:-2])


def lu_unpack(lu: np.ndarray, pivots: np.ndarray) -> tuple:
    """(P, L, U) from a getrf factorization, A = P L U."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = np.tril(lu[..., :, :k], -1)
    lower[..., range(k), range(k)] = 1
    upper = np.triu(lu[..., :k, :])
    return lu_permutation(pivots, m).astype(lu.dtype, copy=False), lower, upper


def lu_permutation(pivots: np.ndarray, m: int) -> np.ndarray:
    """P (float64) of A = P L U from getrf's 1-based pivots (*, k)."""
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    count = math.prod(batch)  # (spelled out: -1 is ambiguous for empty shapes)
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy().reshape(count, m)
    piv = pivots.reshape(count, k) - 1
    rows = np.arange(perm.shape[0])
    for j in range(k):  # replay the row swaps: row i of P^T A is row perm[i] of A
        p = piv[:, j]
        top = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = top
    return np.swapaxes(np.eye(m)[perm.reshape(batch + (m,))], -1, -2)


def lu_solve(lu: np.ndarray, pivots: np.ndarray, b: np.ndarray, left: bool,
             adjoint: bool) -> np.ndarray:
    """X from a getrf factorization A = P L U: AX = B (left) or XA = B, A^T for `adjoint`."""
    p, lower, upper = lu_unpack(lu, pivots)
    # every case is one of A X = B, A^T X = B after transposing both sides
    transpose_a = adjoint != (not left)
    rhs = b if left else np.swapaxes(b, -1, -2)
    batch = np.broadcast_shapes(lu.shape[:-2], rhs.shape[:-2])
    rhs = np.broadcast_to(rhs, batch + rhs.shape[-2:])
    if lu.size == 0 or rhs.size == 0:
        x = np.zeros(rhs.shape, lu.dtype)
    elif not transpose_a:  # U^-1 L^-1 P^T B
        y = np.matmul(np.swapaxes(p, -1, -2), rhs)
        y = _triangular_substitution(np.broadcast_to(lower, batch + lower.shape[-2:]), y, False)
        x = _triangular_substitution(np.broadcast_to(upper, batch + upper.shape[-2:]), y, True)
    else:  # A^T = U^T L^T P^T: X = P L^-T U^-T B
        ut = np.broadcast_to(np.swapaxes(upper, -1, -2), batch + upper.shape[-2:])
        lt = np.broadcast_to(np.swapaxes(lower, -1, -2), batch + lower.shape[-2:])
        y = _triangular_substitution(ut, rhs, False)
        x = np.matmul(p, _triangular_substitution(lt, y, True))
    x = x.astype(lu.dtype, copy=False)
    return column_major(x) if left else np.ascontiguousarray(np.swapaxes(x, -1, -2))


def _lower_factor(factor: np.ndarray, upper: bool) -> np.ndarray:
    """The lower Cholesky factor L of A = L L^T, given L or U = L^T (the other triangle is
    not read)."""
    return np.swapaxes(np.triu(factor), -1, -2) if upper else np.tril(factor)


def cholesky_solve(b: np.ndarray, factor: np.ndarray, upper: bool) -> np.ndarray:
    """X with (L L^T) X = B: two triangular solves."""
    low = _lower_factor(factor, upper)
    batch = np.broadcast_shapes(b.shape[:-2], low.shape[:-2])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    low = np.broadcast_to(low, batch + low.shape[-2:])
    if b.size == 0 or low.size == 0:
        return column_major(np.zeros(b.shape, factor.dtype))
    with np.errstate(divide="ignore", invalid="ignore"):
        y = _triangular_substitution(low, b, False)
        x = _triangular_substitution(np.swapaxes(low, -1, -2), y, True)
    return column_major(x.astype(factor.dtype, copy=False))


def cholesky_inverse(factor: np.ndarray, upper: bool) -> np.ndarray:
    """(L L^T)^-1 = L^-T L^-1."""
    low = _lower_factor(factor, upper)
    if low.size == 0:
        return column_major(np.zeros(low.shape, factor.dtype))
    eye = np.broadcast_to(np.eye(low.shape[-1], dtype=low.dtype), low.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        low_inv = _triangular_substitution(low, eye, False)
    out = np.matmul(np.swapaxes(low_inv, -1, -2), low_inv)
    return column_major(out.astype(factor.dtype, copy=False))
