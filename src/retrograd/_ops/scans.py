"""Running scans: cummax, cummin, logcumsumexp, and the in-place cumsum_ / cumprod_.

cummax and cummin give (values, indices) as retrograd.return_types; their gradient goes to the
element each running extreme was taken from (a scatter-add over `indices`, linear in grad, so
it differentiates again and forward mode transposes it). logcumsumexp's gradient and tangent
are sums of grad (tangent) times exp(self - result) over the scanned positions; both are taken
in log space, with the positive and negative parts of grad (tangent) apart, so neither
overflows where exp(self) or exp(-result) would. The NumPy kernels are in kernels/scans.py.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._dims import wrap_dim
from retrograd._ops.kernels import scans as K
from retrograd._ops.layout import inplace_of, not_implemented
from retrograd._ops.overloads import RETURN_TYPES
from retrograd._ops.reduction import _return_type, cumprod, cumsum, return_types
from retrograd._ops.registry import op
from retrograd._tensor import Tensor

for _name in ("cummax", "cummin", "cummax_out", "cummin_out"):
    setattr(return_types, _name, _return_type(_name))
    RETURN_TYPES[_name] = getattr(return_types, _name)


# --- cummax, cummin ----------------------------------------------------------------------------
# (their public functions wrap the pair in the named tuple: registry.install_methods makes them)


def _to_indices(grad: Tensor, self: Tensor, dim: int, indices: Tensor) -> Tensor:
    """grad added at the positions `indices` name (torch's cummaxmin_backward)."""
    if self.numel() == 0:
        return grad
    return grad.new_zeros(self.shape).scatter_add(dim, indices, grad)


op("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", K.cummax,
   grads={"self": _to_indices}, differentiable_outputs=(True, False))
op("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", K.cummin,
   grads={"self": _to_indices}, differentiable_outputs=(True, False))


# --- logcumsumexp ------------------------------------------------------------------------------


def _signed_logs(t: Tensor) -> tuple:
    """log|t| where t > 0 and where t < 0, the lowest finite value elsewhere (a stand-in for
    log 0 whose differences stay finite)."""
    from retrograd._ops.pointwise import where

    lowest = float(D.finfo(t.dtype).min)
    log_abs = t.abs().log()
    return where(t > 0, log_abs, lowest), where(t < 0, log_abs, lowest)


def _reverse_logcumsumexp(x: Tensor, dim: int) -> Tensor:
    return x.flip(dim).logcumsumexp(dim).flip(dim)


def _logcumsumexp_backward(grad: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    """grad_self[k] = sum over j >= k of grad[j] * exp(self[k] - result[j])."""
    if self.dim() == 0 or self.numel() == 0:
        return grad
    d = wrap_dim(dim, self.dim())
    with np.errstate(divide="ignore", over="ignore"):  # log 0, and lowest + a negative: -inf
        positive, negative = _signed_logs(grad)
        return ((_reverse_logcumsumexp(positive - result, d) + self).exp()
                - (_reverse_logcumsumexp(negative - result, d) + self).exp())


def _logcumsumexp_jvp(self: Tensor, dim: int, result: Tensor, self_t: Tensor | None):
    """tangent[j] = sum over k <= j of self_t[k] * exp(self[k] - result[j])."""
    if self_t is None:
        return None
    if self.dim() == 0 or self.numel() == 0:
        return self_t.clone()
    d = wrap_dim(dim, self.dim())
    with np.errstate(divide="ignore", over="ignore"):  # log 0, and lowest + a negative: -inf
        positive, negative = _signed_logs(self_t)
        return ((positive + self).logcumsumexp(d) - result).exp() \
            - ((negative + self).logcumsumexp(d) - result).exp()


logcumsumexp = op("logcumsumexp(Tensor self, int dim) -> Tensor", K.logcumsumexp,
                  grads={"self": _logcumsumexp_backward}, jvp=_logcumsumexp_jvp)


# --- cumsum_, cumprod_ -------------------------------------------------------------------------


def _in_place_check(name: str):
    """torch's checks of cumsum_ / cumprod_: a bool self has no kernel, and a dtype= must be
    self's own."""
    def check(a: np.ndarray, dim: int, dtype) -> None:
        wrap_dim(dim, a.ndim)
        if dtype is not None and dtype.np != a.dtype:
            names = D.CPP_NAMES
            raise RuntimeError(
                "Bad in-place call: input tensor dtype "
                f"{names[str(D.from_numpy_dtype(a.dtype)).rpartition('.')[2]]} and output tensor "
                f"dtype {names[str(dtype).rpartition('.')[2]]} should match")
        if a.dtype == np.bool_:
            raise not_implemented(f"{name}_out_cpu", a.dtype)

    return check


cumsum_ = inplace_of(cumsum, check=_in_place_check("cumsum"))
cumprod_ = inplace_of(cumprod, check=_in_place_check("cumprod"))
