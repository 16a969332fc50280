"""The named tuples torch.linalg returns (torch.return_types.linalg_inv_ex, svd, ...)."""

from __future__ import annotations

from retrograd._ops.reduction import _return_type, return_types


def _named(name: str, fields: tuple) -> type:
    # retrograd.return_types.<name>, next to the reductions' types
    cls = _return_type(name, fields)
    setattr(return_types, name, cls)
    return cls


_named("linalg_inv_ex", ("inverse", "info"))
_named("linalg_slogdet", ("sign", "logabsdet"))
_named("slogdet", ("sign", "logabsdet"))
_named("linalg_solve_ex", ("result", "info"))
_named("linalg_cholesky_ex", ("L", "info"))
_named("linalg_eigh", ("eigenvalues", "eigenvectors"))
_named("linalg_svd", ("U", "S", "Vh"))
_named("svd", ("U", "S", "V"))
_named("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_named("linalg_lu_factor", ("LU", "pivots"))
_named("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_named("linalg_lu", ("P", "L", "U"))
_named("lu_unpack", ("P", "L", "U"))

__all__ = ["return_types"]
