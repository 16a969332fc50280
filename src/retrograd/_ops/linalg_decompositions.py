"""torch.linalg's decompositions: cholesky (and torch.cholesky), eigh / eigvalsh, svd / svdvals
(and torch.svd), pinv (and torch.pinverse), lstsq.

Gradients are the standard real formulas written with retrograd ops (matmul, the triangular
solve, the decompositions themselves), so they differentiate again. The kernels are in
kernels/linalg_decompositions.py and kernels/linalg_solvers.py.
"""

from __future__ import annotations

from retrograd import _warning_site as _ws
from retrograd._ops import linalg as _mm
from retrograd._ops.kernels import linalg_decompositions as KD
from retrograd._ops.kernels import linalg_solvers as K
from retrograd._ops.layout import type_name
from retrograd._ops.linalg_checks import check_float, check_matrix, check_square
from retrograd._ops.linalg_inverse import _solve_triangular
from retrograd._ops.linalg_out import CAST, with_out
from retrograd._ops.linalg_returns import return_types
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

matmul = _mm.matmul


def _eye_like(S: Tensor, k: int) -> Tensor:
    from retrograd._ops.creation import eye

    return eye(k, dtype=S.dtype)


def _set_diagonal(X: Tensor, d: Tensor | None) -> Tensor:
    """X with its diagonal replaced by d (zeros when d is None)."""
    from retrograd._ops.diagonals import diag_embed

    out = X - diag_embed(X.diagonal(0, -2, -1))
    return out if d is None else out + diag_embed(d)


# --- Cholesky --------------------------------------------------------------------------------


def _cholesky_grad(grad: Tensor, L: Tensor, upper: bool) -> Tensor:
    """A = L L^T, dL = L phi(L^-1 dA L^-T) with phi the lower triangle, diagonal halved: the
    gradient is L^-T sym(phi(L^T gL)) L^-1, symmetric as A is."""
    if upper:
        L, grad = L.mT, grad.mT
    P = matmul(L.mT, grad).tril()
    P = P - 0.5 * _diagonal_only(P)
    X = _solve_triangular(L.mT, P, upper=True)
    gA = _solve_triangular(L, X, upper=False, left=False)
    return 0.5 * (gA + gA.mT)


def _diagonal_only(X: Tensor) -> Tensor:
    from retrograd._ops.diagonals import diag_embed

    return diag_embed(X.diagonal(0, -2, -1))


_linalg_cholesky_ex = op(
    "linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> "
    "(Tensor L, Tensor info)",
    lambda a, upper, check_errors: K.cholesky_ex(a, upper, check_errors),
    grads={"self": lambda grad, L, upper: _cholesky_grad(grad, L, upper)},
    function=False, method=False)

_cholesky_legacy = op(
    "cholesky(Tensor self, bool upper=False) -> Tensor",
    lambda a, upper: K.cholesky_ex(a, upper, True, "cholesky")[0],
    grads={"self": lambda grad, result, upper: _cholesky_grad(grad, result, upper)},
    function=False, method=False)

CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
    "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
    "equivalent results for all valid (symmetric positive definite) inputs.")


@with_out("linalg_cholesky_ex", "linalg_cholesky_ex", 2, fields=("L", "info"))
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False,
                out=None) -> tuple:
    """torch.linalg.cholesky_ex: (L, info); info > 0 is the order of the first leading minor
    that is not positive-definite."""
    _check_cholesky("linalg.cholesky", A)
    return return_types.linalg_cholesky_ex(
        _linalg_cholesky_ex(A, upper=upper, check_errors=check_errors))


@with_out("linalg_cholesky", "linalg_cholesky_ex")
def cholesky(A: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """torch.linalg.cholesky: L with A = L L^T (or U = L^T with upper=True)."""
    _check_cholesky("linalg.cholesky", A)
    L, info = _linalg_cholesky_ex(A, upper=upper)
    K.raise_for_info("linalg.cholesky", info._data, K.NOT_PD)
    return L


@with_out("cholesky", "cholesky", 1, CAST)
def torch_cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """torch.cholesky / Tensor.cholesky (deprecated in torch, its own CholeskyBackward0)."""
    _ws.warn(CHOLESKY_DEPRECATED, UserWarning, stacklevel=3)  # past with_out's frame
    _check_cholesky("cholesky", input)
    return _cholesky_legacy(input, upper)


def _check_cholesky(name: str, A: Tensor) -> None:
    check_square(name, A)
    check_float(name, A)


# --- eigh ------------------------------------------------------------------------------------


def _eigh_grad(grads, eigenvalues: Tensor, eigenvectors: Tensor) -> Tensor | None:
    """gA = V (diag(gL) + (V^T gV) / E) V^T with E[i, j] = L[j] - L[i] off the diagonal,
    symmetrized (A is symmetric; torch's gradient is too)."""
    gL, gV = grads
    L, V = eigenvalues, eigenvectors
    if gV is None:
        if gL is None:
            return None
        return matmul(V * gL.unsqueeze(-2), V.mT)
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + _eye_like(L, L.shape[-1])
    VtgV = matmul(V.mT, gV)
    inner = _set_diagonal(0.5 * (VtgV - VtgV.mT) / E, gL)
    return matmul(V, matmul(inner, V.mT))


_linalg_eigh = op(
    "_linalg_eigh(Tensor A, str UPLO=\"L\", bool compute_v=True) -> (Tensor eigenvalues, "
    "Tensor eigenvectors)", KD.eigh, grads={"A": _eigh_grad}, function=False, method=False)


def _check_eigh(A: Tensor, UPLO: str) -> None:
    check_square("linalg.eigh", A)
    if not A.dtype.is_floating_point or A.dtype.name in ("float16", "bfloat16"):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{type_name(A._data.dtype)}'")
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


@with_out("linalg_eigh", "_linalg_eigh", 2, fields=("eigenvalues", "eigenvectors"))
def eigh(A: Tensor, UPLO: str = "L", *, out=None) -> tuple:
    """torch.linalg.eigh: (eigenvalues ascending, eigenvectors as columns) of a symmetric A,
    read from its lower (UPLO='L') or upper triangle."""
    _check_eigh(A, UPLO)
    return return_types.linalg_eigh(_linalg_eigh(A, UPLO.upper()))


@with_out("linalg_eigvalsh", "_linalg_eigh")
def eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    """torch.linalg.eigvalsh (eigenvectors are computed too, for the gradient, as torch)."""
    _check_eigh(A, UPLO)
    return _linalg_eigh(A, UPLO.upper())[0]


# --- SVD -------------------------------------------------------------------------------------


def _svd_grad(grads, A: Tensor, U: Tensor, S: Tensor, Vh: Tensor, full_matrices: bool):
    """The real SVD gradient: with F[i, j] = 1 / (s_j^2 - s_i^2),
    gA = U [skew(U^T gU) S F + S skew(V^T gV) F + diag(gS)] V^T plus, for a tall (wide) A, the
    part of gU (gV) outside U's (V's) span."""
    gU, gS, gVh = grads
    if gU is None and gS is None and gVh is None:
        return None
    m, n = A.shape[-2], A.shape[-1]
    k = S.shape[-1]
    if full_matrices and m != n:  # the completed bases are arbitrary: only k vectors count
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    if gU is None and gVh is None:
        return matmul(U * gS.unsqueeze(-2), Vh)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye_like(S, k)
    inner = None
    if gU is not None:
        UtgU = matmul(U.mT, gU)
        inner = (UtgU - UtgU.mT) * S.unsqueeze(-2)
    if gVh is not None:
        VtgV = matmul(Vh, gVh.mT)
        term = S.unsqueeze(-1) * (VtgV - VtgV.mT)
        inner = term if inner is None else inner + term
    inner = inner / E
    if gS is not None:
        inner = _set_diagonal(inner, gS)
    if m > n and gU is not None:
        gUSinv = gU / S.unsqueeze(-2)
        out = matmul(U, inner) + gUSinv - matmul(U, matmul(U.mT, gUSinv))
        return matmul(out, Vh)
    if m < n and gVh is not None:
        gVhSinv = gVh / S.unsqueeze(-1)
        out = matmul(inner, Vh) + gVhSinv - matmul(matmul(gVhSinv, Vh.mT), Vh)
        return matmul(U, out)
    return matmul(matmul(U, inner), Vh)


_linalg_svd = op(
    "_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *, "
    "str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)", KD.svd,
    grads={"A": _svd_grad}, function=False, method=False)


def _check_svd(A: Tensor, driver) -> None:
    check_matrix("linalg.svd", A)
    check_float("linalg.svd", A)
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


@with_out("linalg_svd", "_linalg_svd", 3, fields=("U", "S", "Vh"))
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None, out=None) -> tuple:
    """torch.linalg.svd: (U, S, Vh) with A = U diag(S) Vh, S descending."""
    _check_svd(A, driver)
    return return_types.linalg_svd(_linalg_svd(A, full_matrices, True))


@with_out("linalg_svdvals", "_linalg_svd")
def svdvals(A: Tensor, *, driver: str | None = None, out=None) -> Tensor:
    """torch.linalg.svdvals. U and Vh are computed too: the gradient needs them, and a tangent
    (forward mode, vmap) may ask for one whatever requires_grad says."""
    _check_svd(A, driver)
    return _linalg_svd(A, False, True)[1]


@with_out("svd", "_linalg_svd", 3, fields=("U", "S", "V"))
def torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None) -> tuple:
    """torch.svd / Tensor.svd: (U, S, V) -- V, not Vh; without compute_uv, U and V are zeros."""
    _check_svd(input, None)
    if not compute_uv:
        S = svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        U = input.new_zeros(batch + (m, m)).detach()
        V = input.new_zeros(batch + (n, n)).detach()
        return return_types.svd((U, S, V))
    U, S, Vh = _linalg_svd(input, not some, True)
    return return_types.svd((U, S, Vh.mT))


# --- pinv ------------------------------------------------------------------------------------


def _pinv_grad(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """For P = A^+ of constant rank: dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P,
    so gA = -P^T gP P^T + (I - A P) gP^T P P^T + P^T P gP^T (I - P A)."""
    A, P = self, result
    gPt = grad.mT
    out = -matmul(matmul(P.mT, grad), P.mT)
    out = out + matmul(gPt - matmul(A, matmul(P, gPt)), matmul(P, P.mT))
    return out + matmul(matmul(P.mT, P), gPt - matmul(matmul(gPt, P), A))


_linalg_pinv = op(
    "linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, "
    "bool hermitian=False) -> Tensor", KD.pinv, grads={"self": _pinv_grad},
    function=False, method=False)


def _scalar_tol(value):
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise NotImplementedError("retrograd.linalg.pinv: a tensor atol/rtol must have one "
                                      "element")
        return float(value.item())
    return None if value is None else float(value)


@with_out("linalg_pinv", "linalg_pinv", 1, CAST)
def pinv(A: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None,
         out=None) -> Tensor:
    """torch.linalg.pinv: the Moore-Penrose pseudo-inverse, singular values at or below
    max(atol, rtol * largest) treated as zero (torch's older overload takes rtol as a
    positional rcond, and hermitian after it)."""
    dt = A.dtype
    if A.dim() < 2 or not dt.is_floating_point or dt.name in ("float16", "bfloat16"):
        raise RuntimeError(f"linalg.pinv({_type_tag(A)}{{{list(A.shape)}}}): expected a tensor "
                           "with 2 or more dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    return _linalg_pinv(A, atol=_scalar_tol(atol), rtol=_scalar_tol(rtol), hermitian=hermitian)


def _type_tag(A: Tensor) -> str:
    return type_name(A._data.dtype)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse / Tensor.pinverse: linalg.pinv with rtol=rcond."""
    return pinv(input, rtol=rcond)


# --- lstsq -----------------------------------------------------------------------------------


def _lstsq_grads(grads, self: Tensor, b: Tensor, solution: Tensor, rcond, output_mask):
    """Through the solution X = A^+ B: gB = A^+T G, gA = pinv's gradient with gP = G B^T.
    Through the residuals |AX - B|^2 (X optimal, so X's own change does not count):
    gB = -2 (AX - B) gR, gA = 2 (AX - B) gR X^T."""
    g, g_res = grads[0], grads[1]
    vector = b.dim() == self.dim() - 1
    X = solution
    if vector:
        b, X = b.unsqueeze(-1), X.unsqueeze(-1)
        g = None if g is None else g.unsqueeze(-1)
    gA = gB = None
    if g is not None:
        P = _linalg_pinv(self, rtol=rcond)
        gA = _pinv_grad(matmul(g, b.mT), self, P) if output_mask[0] else None
        gB = matmul(P.mT, g) if output_mask[1] else None
    if g_res is not None and g_res.numel():
        weighted = (matmul(self, X) - b) * (2 * g_res).unsqueeze(-2)
        part_a, part_b = matmul(weighted, X.mT), -weighted
        gA = part_a if gA is None else gA + part_a
        gB = part_b if gB is None else gB + part_b
    if vector and gB is not None:
        gB = gB.squeeze(-1)
    return (gA if output_mask[0] else None), (gB if output_mask[1] else None)


_linalg_lstsq = op(
    "linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> "
    "(Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)", KD.lstsq,
    grads={"self, b": _lstsq_grads}, differentiable_outputs=(True, True, False, False),
    function=False, method=False)

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None
          ) -> tuple:
    """torch.linalg.lstsq: the least-squares solution of AX = B and, by driver, residuals,
    rank and singular values (CPU default: gelsy)."""
    from retrograd._ops.linalg_checks import broadcast_batches

    name = "torch.linalg.lstsq"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {type_name(A._data.dtype)} and other's dtype "
                           f"{type_name(B._data.dtype)}")
    if A.dtype.name not in ("float32", "float64"):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss)")
    vector = B.dim() == A.dim() - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-2)")
    broadcast_batches(tuple(A.shape[:-2]), tuple(B.shape[:-1 if vector else -2]))
    return return_types.linalg_lstsq(_linalg_lstsq(A, B, rcond, driver=driver))


register("cholesky", torch_cholesky, method=True)
register("svd", torch_svd, method=True)
register("pinverse", pinverse, method=True)
