"""retrograd.lobpcg: k extreme eigenpairs of a symmetric positive definite (generalized)
eigenproblem A x = lambda B x, with torch.lobpcg's signature and gradients.

Deliberate difference: torch iterates LOBPCG from a starting block X until `tol`/`niter`;
retrograd solves the problem exactly with LAPACK (NumPy's eigh, after a Cholesky reduction
when B is given), which is the answer the iteration converges to, with no dependence on X or on
a random start. X, n, iK, niter, tol, method, tracker and the ortho_* parameters are accepted
and only X's shape is checked, as torch does.

Gradients: the problem is solved completely, so the backward is the derivative of all m
eigenpairs (the unselected ones receive no gradient): with F_ij = 1 / (lambda_j - lambda_i)
off the diagonal and 0 on it,
    grad A = U (diag(grad D) + F * (U^T grad U)) U^T,
written in retrograd ops over the saved outputs, so it is differentiable again. As in torch, A
is symmetrized ((A + A^T) / 2) in the graph, so grad A is symmetric, and B takes no gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd._tensor import Tensor, _wrap
from retrograd.autograd.function import Function

NO_B_GRAD = "lobpcg.backward does not support backward with B != I yet."


def _solve(a: np.ndarray, b: np.ndarray | None, k: int, largest: bool) -> tuple:
    """(selected eigenvalues, their vectors, the other eigenvalues, their vectors) as arrays."""
    if b is None:
        w, v = np.linalg.eigh(a)
    else:
        lower = np.linalg.cholesky(b)
        inv = np.linalg.inv(lower)
        w, y = np.linalg.eigh(inv @ a @ np.swapaxes(inv, -1, -2))
        v = np.swapaxes(inv, -1, -2) @ y  # B-orthonormal eigenvectors of the pencil
    if largest:
        w, v = w[..., ::-1], v[..., ::-1]
    return (np.ascontiguousarray(w[..., :k]), np.ascontiguousarray(v[..., :k]),
            np.ascontiguousarray(w[..., k:]), np.ascontiguousarray(v[..., k:]))


class LOBPCGAutogradFunction(Function):
    @staticmethod
    def forward(ctx, A: Tensor, k: int, B: Tensor | None, largest: bool) -> tuple:
        a = A.detach().numpy()
        b = None if B is None else B.detach().numpy()
        d, u, d_rest, u_rest = (_wrap(x.astype(a.dtype, copy=False))
                                for x in _solve(a, b, k, largest))
        ctx.has_B = B is not None
        ctx.save_for_backward(d, u, d_rest, u_rest)
        return d, u, d_rest, u_rest

    @staticmethod
    def backward(ctx, D_grad, U_grad, D_rest_grad, U_rest_grad):
        import retrograd

        if ctx.has_B:
            raise ValueError(NO_B_GRAD)
        d, u, d_rest, u_rest = ctx.saved_tensors
        D = retrograd.cat([d, d_rest], -1)
        U = retrograd.cat([u, u_rest], -1)
        gD = retrograd.cat([_or_zeros(D_grad, d), _or_zeros(D_rest_grad, d_rest)], -1)
        gU = retrograd.cat([_or_zeros(U_grad, u), _or_zeros(U_rest_grad, u_rest)], -1)
        m = D.shape[-1]
        eye = retrograd.eye(m, dtype=D.dtype)
        gaps = D.unsqueeze(-2) - D.unsqueeze(-1)  # lambda_j - lambda_i
        inv_gaps = 1 / gaps.masked_fill(eye.bool(), float("inf"))
        Ut = U.mT
        inner = gD.unsqueeze(-2) * eye + (Ut @ gU) * inv_gaps
        return U @ inner @ Ut, None, None, None


def _or_zeros(g: Tensor | None, like: Tensor) -> Tensor:
    if g is None:
        import retrograd

        return retrograd.zeros_like(like)
    return g


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None,
           tol: float | None = None, largest: bool | None = None, method: str | None = None,
           tracker: Any = None, ortho_iparams: dict | None = None,
           ortho_fparams: dict | None = None, ortho_bparams: dict | None = None) -> tuple:
    """The k largest (largest=True, the default) or smallest eigenvalues of the symmetric
    positive definite problem A x = lambda B x (B = I when None) and their eigenvectors,
    as (D, U) with D of shape (*, k) and U of shape (*, m, k). See the module docstring."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    if X is not None and tuple(X.shape[-2:]) != (m, n):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")
    largest = True if largest is None else largest
    if A.requires_grad or (B is not None and B.requires_grad):
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
        d, u, _, _ = LOBPCGAutogradFunction.apply(A_sym, k, B_sym, largest)
        return d, u
    a = A.detach().numpy()
    b = None if B is None else B.detach().numpy()
    d, u, _, _ = _solve(a, b, k, largest)
    return _wrap(d.astype(a.dtype, copy=False)), _wrap(u.astype(a.dtype, copy=False))
