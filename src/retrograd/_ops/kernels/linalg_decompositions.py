"""NumPy kernels of the spectral decompositions: eigh, SVD, pseudo-inverse, least squares,
each on a batch of matrices (*, m, n), with LAPACK's (so torch's) column-major layout."""

from __future__ import annotations

from typing import Literal

import numpy as np

from retrograd._ops.kernels.linalg_solvers import column_major


def _uplo(uplo: str) -> Literal["L", "U"]:
    return "U" if uplo.upper() == "U" else "L"


def eigh(a: np.ndarray, uplo: str, compute_v: bool = True) -> tuple:
    if a.size == 0:
        return (np.zeros(a.shape[:-1], a.dtype),
                column_major(np.zeros(a.shape if compute_v else (0,), a.dtype)))
    if not compute_v:
        w = np.linalg.eigvalsh(a, UPLO=_uplo(uplo)).astype(a.dtype, copy=False)
        return w, np.zeros((0,), a.dtype)
    w, v = np.linalg.eigh(a, UPLO=_uplo(uplo))
    return w.astype(a.dtype, copy=False), column_major(v.astype(a.dtype, copy=False))


def svd(a: np.ndarray, full_matrices: bool, compute_uv: bool, driver) -> tuple:
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    if not compute_uv:
        s = (np.zeros(batch + (k,), a.dtype) if a.size == 0 else
             np.linalg.svd(a, compute_uv=False).astype(a.dtype, copy=False))
        return np.zeros((0,), a.dtype), s, np.zeros((0,), a.dtype)
    if a.size == 0:  # LAPACK refuses empty matrices: identities complete the bases
        u = np.zeros(batch + (m, m if full_matrices else k), a.dtype)
        vh = np.zeros(batch + (n if full_matrices else k, n), a.dtype)
        u[..., range(min(u.shape[-2:])), range(min(u.shape[-2:]))] = 1
        vh[..., range(min(vh.shape[-2:])), range(min(vh.shape[-2:]))] = 1
        return column_major(u), np.zeros(batch + (k,), a.dtype), column_major(vh)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return (column_major(u.astype(a.dtype, copy=False)), s.astype(a.dtype, copy=False),
            column_major(vh.astype(a.dtype, copy=False)))


def pinv_tolerance(s_max: np.ndarray, m: int, n: int, atol, rtol, dtype) -> np.ndarray:
    """torch's cut-off: max(atol, rtol * largest singular value); rtol defaults to
    eps * max(m, n) when neither is given, to 0 when only atol is."""
    if rtol is None:
        rtol = np.finfo(dtype).eps * max(m, n) if atol is None or atol <= 0 else 0.0
    return np.maximum(0.0 if atol is None else atol, rtol * s_max)


def pinv(a: np.ndarray, atol, rtol, hermitian: bool) -> np.ndarray:
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if hermitian:
        w, q = np.linalg.eigh(a)
        cut = pinv_tolerance(np.abs(w).max(-1, keepdims=True), m, n, atol, rtol, a.dtype)
        keep = np.abs(w) > cut
        inv_w = np.where(keep, 1 / np.where(keep, w, 1), 0)
        out = np.matmul(q * inv_w[..., None, :], np.swapaxes(q, -1, -2))
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        cut = pinv_tolerance(s[..., :1], m, n, atol, rtol, a.dtype)
        keep = s > cut
        inv_s = np.where(keep, 1 / np.where(keep, s, 1), 0)
        out = np.matmul(np.swapaxes(vh, -1, -2) * inv_s[..., None, :], np.swapaxes(u, -1, -2))
    return np.ascontiguousarray(out.astype(a.dtype, copy=False))


def lstsq(a: np.ndarray, b: np.ndarray, rcond, driver: str) -> tuple:
    """(solution, residuals, rank, singular_values) as torch's CPU drivers return them:
    gelsy (default) gives no singular values and no residuals, gels no rank either."""
    if b.ndim == a.ndim - 1:  # a (batch of) vector(s): solved as one column
        out = lstsq(a, b[..., None], rcond, driver)
        return (out[0][..., 0],) + out[1:]
    m, n = a.shape[-2:]
    k = b.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + (m, n))
    b = np.broadcast_to(b, batch + (m, k))
    u, s, vh = (np.linalg.svd(a, full_matrices=False) if a.size else
                (np.zeros(batch + (m, 0)), np.zeros(batch + (0,)), np.zeros(batch + (0, n))))
    if rcond is None:
        rcond = np.finfo(a.dtype).eps * max(m, n)
    cut = rcond * (s[..., :1] if s.shape[-1] else 0)
    keep = s > cut
    inv_s = np.where(keep, 1 / np.where(keep, s, 1), 0)
    x = np.matmul(np.swapaxes(vh, -1, -2) * inv_s[..., None, :],
                  np.matmul(np.swapaxes(u, -1, -2), b))
    rank = keep.sum(-1).astype(np.int64)
    # LAPACK solves in B's buffer of max(m, n) rows: the solution is its first n rows
    buf = np.zeros(batch + (max(m, n), k), a.dtype)
    buf[..., :n, :] = x
    solution = column_major(buf)[..., :n, :]
    empty = np.zeros((0,), a.dtype)
    if driver == "gels":
        return solution, _residuals(a, b, x, m, n, rank), np.zeros((0,), np.int64), empty
    if driver == "gelsy":
        return solution, empty, rank, empty
    return solution, _residuals(a, b, x, m, n, rank), rank, s.astype(a.dtype, copy=False)


def _residuals(a, b, x, m, n, rank) -> np.ndarray:
    """Squared residual norms per column, given only for tall full-rank problems."""
    if m <= n or not np.all(rank == n):
        return np.zeros((0,), a.dtype)
    r = np.matmul(a, x) - b
    return (r * r).sum(-2).astype(a.dtype, copy=False)
