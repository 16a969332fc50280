"""Summing a gradient back to a broadcast input's shape, and the private ops that reduction
backward formulas are written with.

The private ops are constant masks (no gradient: they are piecewise constant), and a few linear
ops (shift, flip, scatter/gather of selected values) declared with each other as derivatives, so
every reduction backward differentiates again.
"""

from __future__ import annotations

import numpy as np

from retrograd._autograd.state import state
from retrograd._ops import dispatch
from retrograd._ops.kernels.reduction import cumulative
from retrograd._ops.layout import c_layout
from retrograd._ops.registry import op
from retrograd._tensor import Tensor, _wrap


def _summed_dims(gshape: tuple, shape: tuple) -> tuple:
    lead = len(gshape) - len(shape)
    return tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1)


def sum_to(grad: Tensor, shape: tuple) -> Tensor:
    """Sum `grad` over the dims that broadcasting added or expanded, giving `shape`."""
    gshape = grad._data.shape
    dims = _summed_dims(gshape, shape)
    if not dims:
        return grad.reshape(shape) if len(gshape) != len(shape) else grad
    if (not (state.grad_enabled and grad._requires_grad) and not dispatch.mode_stack
            and grad.__class__ is Tensor):
        # no double-backward graph is being built, no mode watches the ops and the array holds
        # the values (a wrapper subclass's does not: its class sums): one NumPy reduction
        return _wrap(sum_to_array(grad._data, shape, dims))
    grad = grad.sum(dims, keepdim=True)
    if len(gshape) != len(shape):
        grad = grad.reshape(shape)
    return grad


def sum_to_array(arr: np.ndarray, shape: tuple, dims: tuple | None = None) -> np.ndarray:
    """sum_to on an array: a fresh row-major array (or `arr` itself when nothing is summed)."""
    if dims is None:
        dims = _summed_dims(arr.shape, shape)
        if not dims:
            return arr if arr.shape == shape else arr.reshape(shape)
    if arr.dtype.kind == "V":  # bfloat16 / float8: sum in float32
        total = np.add.reduce(arr, axis=dims, dtype=np.float32).astype(arr.dtype)
    else:
        total = np.add.reduce(arr, axis=dims)
    # a 0-d sum comes back as a NumPy scalar
    return np.asarray(total).reshape(shape)


# --- constant masks --------------------------------------------------------------------------


def _sign(a):
    s = np.asarray(np.sign(a))
    if a.dtype.kind in "fV":
        s[np.isnan(a)] = 0  # torch.sign(nan) is 0
    return s


_MASKS = {
    "notnan": lambda a: ~np.isnan(a),
    "zero": lambda a: a == 0,
}


def _mask_forward(a, kind):
    return np.asarray(_MASKS[kind](a)).astype(a.dtype, copy=False)


# piecewise constant: no formulas, so its output never requires grad, and no tangent either
# (forward AD refuses a float output it has no rule for; these have a zero derivative)
mask = op("_reduction_mask(Tensor self, str kind) -> Tensor", _mask_forward,
          differentiable_outputs=(False,), function=False, method=False)


def _eq_mask_forward(a, b, nan_equal):
    m = a == b
    if nan_equal and a.dtype.kind in "fV":
        m |= np.isnan(a) & np.isnan(b)
    return m.astype(a.dtype)


eq_mask = op("_reduction_eq_mask(Tensor self, Tensor other, bool nan_equal) -> Tensor",
             _eq_mask_forward, differentiable_outputs=(False,), function=False, method=False)


def _zeros_like(self):
    from retrograd._ops.creation import zeros_like

    return zeros_like(self)


# torch's sgn: its derivative is zero but recorded, so a formula using it still builds a graph
sign = op("_reduction_sign(Tensor self) -> Tensor", lambda a: _sign(a).astype(a.dtype, copy=False),
          grads={"self": lambda self: _zeros_like(self)}, function=False, method=False)


# --- linear helpers, each other's derivatives -------------------------------------------------


masked_zero = op("_reduction_masked_zero(Tensor self, Tensor mask) -> Tensor",
                 lambda a, m: np.where(m != 0, 0, a).astype(a.dtype, copy=False),
                 grads={"self": lambda grad, mask: masked_zero(grad, mask)},
                 function=False, method=False)


def _pow_grad(grad, self, exponent):
    if exponent == 0:
        return None  # torch returns zeros; no gradient is the same to the engine
    return grad * (exponent * pow_scalar(self, exponent - 1))


pow_scalar = op("_reduction_pow(Tensor self, float exponent) -> Tensor",
                lambda a, e: np.power(a, a.dtype.type(e)),
                grads={"self": _pow_grad}, function=False, method=False)


def _shift_forward(a, dim, shift, fill):
    out = np.full(a.shape, fill, a.dtype)
    n = a.shape[dim]
    k = min(abs(shift), n)
    dst = [slice(None)] * a.ndim
    src = [slice(None)] * a.ndim
    if shift >= 0:
        dst[dim], src[dim] = slice(k, n), slice(0, n - k)
    else:
        dst[dim], src[dim] = slice(0, n - k), slice(k, n)
    out[tuple(dst)] = a[tuple(src)]
    return out


# out[i] = self[i - shift] along dim, `fill` where that falls outside
shift = op("_reduction_shift(Tensor self, int dim, int shift, float fill) -> Tensor",
           _shift_forward,
           grads={"self": lambda grad, dim, shift: _shift_op(grad, dim, -shift, 0.0)},
           function=False, method=False)
_shift_op = shift

flip = op("_reduction_flip(Tensor self, int dim) -> Tensor",
          lambda a, dim: c_layout(np.flip(a, dim)) if a.ndim else a.copy(),
          grads={"self": lambda grad, dim: flip(grad, dim)}, function=False, method=False)


def _rev_cumsum_forward(a, dim):
    out = np.empty(a.shape, a.dtype)
    if a.ndim == 0:
        out[...] = a
        return out
    cumulative(np.add, np.flip(a, dim), dim, np.flip(out, dim))  # as torch: flip, cumsum, flip
    return out


# sum over i >= k along dim: the adjoint of cumsum
rev_cumsum = op("_reduction_rev_cumsum(Tensor self, int dim) -> Tensor", _rev_cumsum_forward,
                grads={"self": lambda grad, dim: grad.cumsum(dim)},
                function=False, method=False)


def _scatter_forward(g, dim, indices, sizes, keepdim):
    out = np.zeros(tuple(sizes), g.dtype)
    if out.ndim == 0:
        out[...] = g
        return out
    if not keepdim:
        g = np.expand_dims(g, dim)
        indices = np.expand_dims(indices, dim)
    np.put_along_axis(out, indices, g, dim)
    return out


def _gather_forward(a, dim, indices, keepdim):
    if a.ndim == 0:
        return a.copy()
    idx = indices if keepdim else np.expand_dims(indices, dim)
    out = np.take_along_axis(a, idx, dim)
    return c_layout(out if keepdim else np.squeeze(out, dim))


# the gradient of a value-selecting reduction (max.dim, median.dim): grad placed at `indices`
select_scatter = op(
    "_reduction_select_scatter(Tensor grad, int dim, Tensor indices, int[] sizes, bool keepdim)"
    " -> Tensor", _scatter_forward,
    grads={"grad": lambda grad, dim, indices, keepdim: select_gather(grad, dim, indices,
                                                                     keepdim)},
    function=False, method=False)

select_gather = op(
    "_reduction_select_gather(Tensor self, int dim, Tensor indices, bool keepdim) -> Tensor",
    _gather_forward,
    grads={"self": lambda grad, dim, indices, self_shape, keepdim: select_scatter(
        grad, dim, indices, self_shape, keepdim)},
    function=False, method=False)
