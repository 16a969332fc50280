"""retrograd.svd_lowrank and retrograd.pca_lowrank: randomized low-rank SVD and PCA.

The range finder of Halko, Martinsson and Tropp (arXiv:0909.4061, algorithms 4.4 and 5.1):
project A on a Gaussian random matrix, refine the basis with `niter` power iterations (each
product re-orthonormalized by a reduced QR), then take the exact SVD of the small matrix
Q^H A. Everything is written with public ops (matmul, linalg.qr, linalg.svd), so autograd
differentiates through the whole computation, random draws held fixed.

The random matrix is drawn from the default generator with torch's shape ((n, q), with n the
number of columns of the tall orientation of A) and dtype, once per call, before any other
draw; the generator draws torch's numbers (NOTE [torch's random streams]), so one seed gives
torch's approximation (to LAPACK's rounding).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from retrograd._dtype import dtype as _DType
    from retrograd._tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating_dtype(A: Tensor) -> _DType:
    """The dtype of the random matrix: A's own when it is a float16/32/64 or complex tensor,
    float32 otherwise (so integer inputs then fail in matmul with torch's dtype message)."""
    import retrograd

    if A.is_complex() or A.dtype in (retrograd.float16, retrograd.float32, retrograd.float64):
        return A.dtype
    return retrograd.float32


def _minus_mean(X: Tensor, M: Tensor | None, other: Tensor) -> Tensor:
    """X - M @ other, where X = A @ other: the mean is subtracted without forming A - M."""
    return X if M is None else X - M.matmul(other)


def get_approximate_basis(A: Tensor, q: int, niter: int | None = 2,
                          M: Tensor | None = None) -> Tensor:
    """A tensor Q of shape (*, m, q) with orthonormal columns such that Q Q^H (A - M)
    approximates A - M (M = 0 when None), from `niter` power iterations on a Gaussian start."""
    import retrograd

    niter = 2 if niter is None else niter
    dtype = _floating_dtype(A)
    omega = retrograd.randn(A.shape[-1], q, dtype=dtype, device=A.device)
    Q = retrograd.linalg.qr(_minus_mean(A.matmul(omega), M, omega))[0]
    for _ in range(niter):
        # alternate between the column space of A^H and of A, re-orthonormalizing each time
        # so the small singular directions are not lost to rounding
        AhQ = A.mH.matmul(Q)
        Q = retrograd.linalg.qr(AhQ if M is None else AhQ - M.mH.matmul(Q))[0]
        Q = retrograd.linalg.qr(_minus_mean(A.matmul(Q), M, Q))[0]
    return Q


def _svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                 M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    import retrograd

    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    wide = m < n
    if wide:  # work on the tall A^H and swap U and V at the end
        A = A.mH
        if M is not None:
            M = M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    Qh = Q.mH
    B = Qh.matmul(A)
    if M is not None:
        B = B - Qh.matmul(M)
    U_small, S, Vh = retrograd.linalg.svd(B, full_matrices=False)
    U, V = Q.matmul(U_small), Vh.mH
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """An approximate SVD (U, S, V) of A - M (A when M is None) of rank at most q, with
    A ~ U diag(S) V^H: U is (*, m, k), S is (*, k) and V is (*, n, k), k = min(q, m, n).
    M is broadcast to A's shape. Randomized: seed the generator for repeatable results."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """Principal component analysis of the data matrix A (rows are samples): the approximate
    SVD (U, S, V) of A minus its column means (of A itself when center=False). V's columns are
    the principal directions; S ** 2 / (m - 1) the variances along them. q defaults to
    min(6, m, n)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter)
