"""QR in Householder form: geqrf (LAPACK's compact factorization) and
linalg.householder_product / orgqr (the product of its reflectors H_i = I - tau_i v_i v_i^T,
applied to the first columns of the identity).

geqrf comes from NumPy's raw QR, which is LAPACK's geqrf output stored transposed; like torch
it has no derivative. householder_product's gradient is a reverse sweep over the reflectors
written with retrograd ops (LinalgHouseholderProductBackward0). Real dtypes only.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels.linalg_solvers import column_major
from retrograd._ops.layout import not_implemented
from retrograd._ops.linalg_returns import _named
from retrograd._ops.registry import op, register, register_method
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


def _hp_forward(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    m, n = a.shape[-2:]
    q = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    # right to left: Q = H_0 (H_1 (... (H_{k-1} E)))
    for i in range(tau.shape[-1] - 1, -1, -1):
        v = np.zeros(a.shape[:-1], a.dtype)
        v[..., i] = 1
        v[..., i + 1:] = a[..., i + 1:, i]
        w = np.einsum("...m,...mn->...n", v, q)
        q -= tau[..., i, None, None] * v[..., :, None] * w[..., None, :]
    return column_major(q)


def _reflector(a: Tensor, i: int) -> Tensor:
    """v_i as a column: zeros above row i, one at row i, a's column i below."""
    import retrograd

    batch, m = tuple(a.shape[:-2]), a.shape[-2]
    parts = [retrograd.zeros(*batch, i, dtype=a.dtype), retrograd.ones(*batch, 1, dtype=a.dtype)]
    if i + 1 < m:
        parts.append(a[..., i + 1:, i])
    return retrograd.cat(parts, dim=-1).unsqueeze(-1)


def _hp_grads(grad: Tensor, input: Tensor, tau: Tensor) -> tuple:
    """Reverse sweep over Q_i = H_i Q_{i+1} (Q_k = E): with G_i the gradient for Q_i,
    d tau_i = -<G_i, v_i v_i^T Q_{i+1}>, d v_i = -tau_i (G_i Q_{i+1}^T + Q_{i+1} G_i^T) v_i and
    G_{i+1} = H_i^T G_i. The Q_{i+1} are recomputed from input, so this differentiates again."""
    import retrograd

    a = input
    batch, (m, n), k = tuple(a.shape[:-2]), tuple(a.shape[-2:]), tau.shape[-1]
    vs = [_reflector(a, i) for i in range(k)]
    ts = [tau[..., i].unsqueeze(-1).unsqueeze(-1) for i in range(k)]
    states: list = [None] * k
    q = retrograd.eye(m, n, dtype=a.dtype).expand(*batch, m, n)
    for i in range(k - 1, -1, -1):
        states[i] = q
        q = q - ts[i] * (vs[i] @ (vs[i].mT @ q))
    g = grad
    cols, dtau = [], []
    for i in range(k):
        v, t, qi = vs[i], ts[i], states[i]
        vg, vq = v.mT @ g, v.mT @ qi
        dtau.append(-(vg * vq).sum((-2, -1)))
        dv = -t * (g @ vq.mT + qi @ vg.mT)
        col = retrograd.zeros(*batch, i + 1, 1, dtype=a.dtype)
        cols.append(retrograd.cat([col, dv[..., i + 1:, :]], dim=-2) if i + 1 < m else col)
        g = g - t * (v @ vg)
    if n > k:
        cols.append(retrograd.zeros(*batch, m, n - k, dtype=a.dtype))
    return retrograd.cat(cols, dim=-1), retrograd.stack(dtau, dim=-1)


_householder_product = op(
    "linalg_householder_product(Tensor input, Tensor tau) -> Tensor", _hp_forward,
    grads={"input, tau": _hp_grads}, function=False, method=False)


def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """torch.linalg.householder_product: the first n columns of H_0 ... H_{k-1}."""
    if out is not None:
        raise NotImplementedError("retrograd.linalg.householder_product does not support out=")
    _check_householder("torch.linalg.householder_product", A, tau)
    return _householder_product(A, tau)


def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """torch.orgqr / Tensor.orgqr: linalg.householder_product."""
    return householder_product(input, tau)


def _geqrf_method(self: Tensor) -> tuple:
    """Tensor.geqrf: torch.geqrf of self."""
    return geqrf(self)


register("geqrf", geqrf)
register_method("geqrf", _geqrf_method)
register("orgqr", orgqr, method=True)
