"""torch's pre-linalg functions: qr, lu and lu_solve as deprecated wrappers over torch.linalg
(warning once per process, as torch's TORCH_WARN_ONCE), and the removed matrix_rank, solve,
lstsq, symeig and eig, which raise torch's message naming their replacement."""

from __future__ import annotations

from typing import Any

from retrograd._ops.linalg_returns import _named
from retrograd._tensor import Tensor
from retrograd._warn_always import warn_once

_qr_type = _named("qr", ("Q", "R"))
_lu_info_type = _named("_lu_with_info", ("LU", "pivots", "info"))

QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\n"
    "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)")



def _linalg() -> Any:
    import retrograd.linalg

    return retrograd.linalg


def qr(input: Tensor, some: bool = True, *, out: Any = None) -> Any:
    """torch.qr: linalg.qr with mode 'reduced' (some=True) or 'complete'."""
    warn_once("qr", QR_DEPRECATED)
    q, r = _linalg().qr(input, "reduced" if some else "complete")
    if out is not None:
        out[0].resize_(q.shape).copy_(q)
        out[1].resize_(r.shape).copy_(r)
        return _qr_type(tuple(out))
    return _qr_type((q, r))


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """torch.lu: (LU, pivots), with the info tensor too when get_infos, as
    linalg.lu_factor_ex computes them; without get_infos a singular matrix raises."""
    warn_once("lu", LU_DEPRECATED)
    linalg = _linalg()
    if get_infos:
        result = linalg.lu_factor_ex(A, pivot=pivot)
    else:
        result = linalg.lu_factor(A, pivot=pivot)
    if out is not None:
        for dst, src in zip(out, result):
            dst.resize_(src.shape).copy_(src)
        return tuple(out)
    if get_infos:
        return _lu_info_type(tuple(result))
    return tuple(result)


def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out: Any = None) -> Tensor:
    """torch.lu_solve(B, LU, pivots): linalg.lu_solve with its arguments in the old order."""
    warn_once("lu_solve", LU_SOLVE_DEPRECATED)
    return _linalg().lu_solve(LU_data, LU_pivots, input, out=out)


def _qr_method(self: Tensor, some: bool = True) -> Any:
    return qr(self, some)


def _lu_method(self: Tensor, pivot: bool = True, get_infos: bool = False) -> Any:
    return lu(self, pivot, get_infos)


def _lu_solve_method(self: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    return lu_solve(self, LU_data, LU_pivots)


# --- removed in 1.9: calls raise torch's message --------------------------------------------

REMOVED = "This function was deprecated since version 1.9 and is now removed."


def matrix_rank(input: Any, tol: Any = None, symmetric: bool = False, *, out: Any = None) -> Any:
    raise RuntimeError(
        f"{REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
        "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def solve(input: Any, A: Any, *, out: Any = None) -> Any:
    raise RuntimeError(
        f"{REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with "
        "`torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
        "replaced with:\nX = torch.linalg.solve(A, B)")


def lstsq(input: Any, A: Any, *, out: Any = None) -> Any:
    raise RuntimeError(
        f"{REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
        "in the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
        "The returned solution in `torch.lstsq` stored the residuals of the solution in the "
        "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
        "residuals are in the field 'residuals' of the returned named tuple.\n\n"
        "The unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution")


def symeig(input: Any, eigenvectors: bool = False, upper: bool = True, *,
           out: Any = None) -> Any:
    raise RuntimeError(
        f"{REMOVED} The default behavior has changed from using the upper triangular portion "
        "of the matrix by default to using the lower triangular portion.\n\n"
        "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def eig(self: Any, eigenvectors: bool = False, *, e: Any = None, v: Any = None) -> Any:
    raise RuntimeError(
        f"{REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\n"
        "L, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\n"
        "and\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")


def _solve_method(self: Any, other: Any) -> Any:
    return solve(self, other)


def _lstsq_method(self: Any, other: Any) -> Any:
    return lstsq(self, other)


def _eig_method(self: Any, eigenvectors: bool = False) -> Any:
    return eig(self, eigenvectors=eigenvectors)


def _symeig_method(self: Any, eigenvectors: bool = False) -> Any:
    return symeig(self, eigenvectors=eigenvectors)


def _register() -> None:
    from retrograd._ops.registry import register, register_method

    functions: tuple[Any, ...] = (qr, lu, lu_solve, matrix_rank, solve, lstsq, symeig, eig)
    for fn in functions:
        register(fn.__name__, fn)
    methods: tuple[tuple[str, Any], ...] = (
        ("qr", _qr_method), ("lu", _lu_method), ("lu_solve", _lu_solve_method),
        ("solve", _solve_method), ("lstsq", _lstsq_method), ("eig", _eig_method),
        ("symeig", _symeig_method))
    for name, method in methods:
        register_method(name, method)


_register()
