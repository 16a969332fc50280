"""The named tuples torch.linalg returns (torch.return_types.linalg_inv_ex, svd, ...)."""

from __future__ import annotations

from retrograd._ops.reduction import return_types


class _NamedResult(tuple):
    """A named tuple of a fixed number of fields, like torch.return_types' structseqs."""

    __slots__ = ()
    _fields: tuple = ()

    def __new__(cls, sequence):
        sequence = tuple(sequence)
        n = len(cls._fields)
        if len(sequence) != n:
            raise TypeError(f"retrograd.return_types.{cls.__name__}() takes a {n}-sequence "
                            f"({len(sequence)}-sequence given)")
        return tuple.__new__(cls, sequence)

    @property
    def n_fields(self) -> int:
        return len(self._fields)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"retrograd.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self),))


def _named(name: str, fields: tuple) -> type:
    ns = {"__slots__": (), "_fields": fields, "__module__": "retrograd.return_types",
          "__qualname__": name}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    cls = type(name, (_NamedResult,), ns)
    # retrograd.return_types.<name>, next to the reductions' types
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
