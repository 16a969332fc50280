"""QR in Householder form: geqrf (LAPACK's compact factorization) and
linalg.householder_product / orgqr (the product of its reflectors).

geqrf comes from NumPy's raw QR, which is LAPACK's geqrf output stored transposed; like torch
it has no derivative. householder_product is written with retrograd ops, one reflector
H_i = I - tau_i v_i v_i^H at a time applied to the first columns of the identity, so its gradient
(and the gradient of that) come from those ops; the node on the result is therefore that of the
last op, not torch's LinalgHouseholderProductBackward0.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels.linalg_solvers import column_major
from retrograd._ops.layout import not_implemented
from retrograd._ops.linalg_returns import _named
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

_named("geqrf", ("a", "tau"))
NO_DERIVATIVE = "the derivative for 'geqrf' is not implemented."


def _geqrf_forward(a: np.ndarray) -> tuple:
    if a.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if a.dtype.kind not in "fc" or a.dtype.itemsize < 4:
        raise not_implemented("geqrf_cpu", a.dtype)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    if a.size == 0:
        return column_major(np.zeros(a.shape, a.dtype)), np.zeros((*batch, min(m, n)), a.dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    # LAPACK's column-major layout, as torch returns it
    return (column_major(np.swapaxes(h, -1, -2).astype(a.dtype, copy=False)),
            tau.astype(a.dtype, copy=False))


def _geqrf_no_derivative(grad):
    raise NotImplementedError(NO_DERIVATIVE)


_geqrf = op("geqrf(Tensor self) -> (Tensor a, Tensor tau)", _geqrf_forward,
            grads={"self": _geqrf_no_derivative}, function=False, method=False)


def geqrf(input: Tensor, *, out=None) -> tuple:
    """torch.geqrf: (a, tau), R above a's diagonal and the reflectors below it."""
    if out is not None:
        raise NotImplementedError("retrograd.geqrf does not support out=")
    from retrograd._ops.reduction import return_types

    return return_types.geqrf(_geqrf(input))


def _check_householder(name: str, a: Tensor, tau: Tensor) -> None:
    if a.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if a.shape[-1] < tau.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if a.dim() - tau.dim() != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{a.dim()}")
    if tau.dtype != a.dtype:
        from retrograd._ops.layout import type_name

        raise RuntimeError(f"{name}: tau dtype {type_name(tau.dtype.np)} does not match "
                           f"input dtype {type_name(a.dtype.np)}")
    if not (a.is_floating_point() or a.is_complex()):
        raise not_implemented("orgqr_cpu", a.dtype.np)
    if a.shape[:-2] != tau.shape[:-1]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {tuple(tau.shape[:-1])}")


def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """torch.linalg.householder_product: the first n columns of H_1 ... H_k."""
    import retrograd

    if out is not None:
        raise NotImplementedError("retrograd.linalg.householder_product does not support out=")
    _check_householder("torch.linalg.householder_product", A, tau)
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    q = retrograd.eye(m, n, dtype=A.dtype).expand(*batch, m, n)
    # applied right to left: Q = H_1 (H_2 (... (H_k E)))
    for i in range(tau.shape[-1] - 1, -1, -1):
        head = retrograd.zeros(*batch, i, dtype=A.dtype)
        one = retrograd.ones(*batch, 1, dtype=A.dtype)
        parts = [head, one] + ([A[..., i + 1:, i]] if i + 1 < m else [])
        v = retrograd.cat(parts, dim=-1).unsqueeze(-1)
        t = tau[..., i].unsqueeze(-1).unsqueeze(-1)
        q = q - t * (v @ (v.mT @ q))
    return q


def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """torch.orgqr / Tensor.orgqr: linalg.householder_product."""
    return householder_product(input, tau)


register("geqrf", geqrf, method=True)
register("orgqr", orgqr, method=True)
