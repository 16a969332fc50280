"""Normalization: layer_norm, batch_norm, group_norm (torch's native_* ops), instance_norm,
rms_norm.

Each native op has a fused NumPy forward and a fused NumPy backward op. As PyTorch does for
layer_norm, the derivative formula uses the fused backward when no graph of the gradient is being
built, and otherwise a composite of retrograd ops (so double backward works); both compute the
same math:
    xhat = (x - mean) * rstd,   gxhat = grad * weight
    grad_input = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))   (means over the
    normalized elements), grad_weight = sum(grad * xhat), grad_bias = sum(grad).

The NumPy kernels the declarations run are in kernels/normalization.py.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._autograd.state import state
from retrograd._ops.arg_check import type_name
from retrograd._ops.kernels.normalization import (
    _batch_norm_backward_forward,
    _batch_norm_forward,
    _bn_axes,
    _channel_view,
    _check_layer_norm,
    _check_values_per_channel,
    _group_norm_backward_forward,
    _group_norm_forward,
    _layer_norm_backward_forward,
    _layer_norm_forward,
    _ln_axes,
    _shape_arg,
)
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor, _wrap

_HALF_KINDS = ("float16", "bfloat16")
_NO_STATS = (True, False, False)  # mean / rstd outputs carry no gradient, as in torch


# --- shared composites (used when the gradient itself needs a graph) -------------------------


def _rsqrt(t: Tensor) -> Tensor:
    rsqrt = getattr(Tensor, "rsqrt", None)
    return rsqrt(t) if rsqrt is not None else (t.log() * -0.5).exp()


def _sum_dims(t: Tensor, dims: tuple) -> Tensor:
    return t.sum(list(dims)) if dims else t


def _composite_grads(g: Tensor, x: Tensor, w, stat_axes: tuple, param_axes: tuple, eps: float,
                     mask: tuple, w_view=None):
    """The fused backward written with retrograd ops, differentiable in g, x and w."""
    mean = x.mean(list(stat_axes), True)
    xc = x - mean
    rstd = _rsqrt((xc * xc).mean(list(stat_axes), True) + eps)
    xhat = xc * rstd
    gi = gw = gb = None
    if mask[0]:
        gx = g if w is None else g * (w if w_view is None else w_view(w))
        m1 = gx.mean(list(stat_axes), True)
        m2 = (gx * xhat).mean(list(stat_axes), True)
        gi = rstd * (gx - m1 - xhat * m2)
    if mask[1]:
        gw = _sum_dims(g * xhat, param_axes)
    if mask[2]:
        gb = _sum_dims(g, param_axes)
    return gi, gw, gb


def _fused_wanted() -> bool:
    """Use the fused NumPy backward unless the gradient must itself be differentiable: when no
    graph of it is built and no mode needs its ops, or while the compiler captures a backward
    that is never differentiated (the graph then records the fused op, as eager runs it)."""
    from retrograd._ops import dispatch

    return (not state.grad_enabled and not dispatch.mode_stack) or state.first_order_capture


# --- layer_norm ------------------------------------------------------------------------------


# The NumPy forward and fused backward: kernels/normalization.py (NOTE [Layer norm by rows]).


native_layer_norm_backward = op(
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
    "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> "
    "(Tensor, Tensor, Tensor)", _layer_norm_backward_forward, function=False, method=False)


def _layer_norm_grads(grad, input, normalized_shape, result1, result2, weight, bias, eps,
                      output_mask):
    if _fused_wanted():
        return native_layer_norm_backward(grad, input, normalized_shape, result1, result2,
                                          weight, bias, list(output_mask))
    axes = _ln_axes(input.ndim, normalized_shape)
    return _composite_grads(grad, input, weight, axes, tuple(range(input.ndim - len(axes))),
                            eps, output_mask)


native_layer_norm = op(
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor, Tensor, Tensor)", _layer_norm_forward,
    grads={"input, weight, bias": _layer_norm_grads},
    array_grads={"input, weight, bias": lambda grad, input, normalized_shape, result1, result2,
                 weight, bias, eps, output_mask: _layer_norm_backward_forward(
                     grad, input, normalized_shape, result1, result2, weight, bias,
                     output_mask)},
    differentiable_outputs=_NO_STATS, method=False)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    normalized_shape = _shape_arg("layer_norm", normalized_shape)
    return native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def _f_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
                  bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    return layer_norm(input, normalized_shape, weight, bias, eps)


register("layer_norm", layer_norm)
register_functional("layer_norm", _f_layer_norm)


# --- batch_norm ------------------------------------------------------------------------------


native_batch_norm_backward = op(
    "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
    "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
    "bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    _batch_norm_backward_forward, function=False, method=False)


def _batch_norm_grads(grad, input, weight, running_mean, running_var, training, eps, result1,
                      result2, output_mask):
    if _fused_wanted():
        return native_batch_norm_backward(grad, input, weight, running_mean, running_var,
                                          result1, result2, training, eps, list(output_mask))
    nd = input.ndim
    axes = _bn_axes(nd)
    if training:
        return _composite_grads(grad, input, weight, axes, axes, eps, output_mask,
                                w_view=lambda w: _channel_view(w, nd))
    # eval: the statistics are constants, the map is affine in the input
    rstd = _rsqrt(_channel_view(running_var, nd).detach() + eps)
    xhat = (input - _channel_view(running_mean, nd).detach()) * rstd
    gi = gw = gb = None
    if output_mask[0]:
        gi = grad * (rstd if weight is None else rstd * _channel_view(weight, nd))
    if output_mask[1]:
        gw = (grad * xhat).sum(list(axes))
    if output_mask[2]:
        gb = grad.sum(list(axes))
    return gi, gw, gb


_native_batch_norm = op(
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    _batch_norm_forward, grads={"input, weight, bias": _batch_norm_grads},
    differentiable_outputs=_NO_STATS, method=False)


# the running stats are updated in place by the forward; like torch's kernel this does not bump
# their version counters (a graph that saved them in eval mode still sees later writes)
native_batch_norm = _native_batch_norm
register("native_batch_norm", native_batch_norm)


def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    if input.numel() == 0:
        # as torch's composite: no values, no statistics (nor checks of the running ones); a
        # copy rather than the input itself keeps the graph
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)[0]


def _f_batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None,
                  training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    if training:
        _check_values_per_channel(tuple(input.shape))
    return batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


register("batch_norm", batch_norm)
register_functional("batch_norm", _f_batch_norm)


def _tile(t, n: int):
    """(C,) -> (n*C,) by repeating, built from view ops so gradients flow to t."""
    if t is None:
        return None
    c = t.shape[0]
    return t.unsqueeze(0).expand(n, c).reshape(n * c)


def _f_instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None, bias=None,
                     use_input_stats: bool = True, momentum: float = 0.1,
                     eps: float = 1e-5) -> Tensor:
    """Batch norm of the (1, N*C, *) reshape: each (sample, channel) plane gets its own stats."""
    shape = tuple(input.shape)
    if use_input_stats and math.prod(shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"torch.Size({list(shape)})")
    n, c = shape[0], shape[1]
    folded = input.reshape((1, n * c) + shape[2:])
    rm = None if running_mean is None else _wrap(np.tile(running_mean._data, n))
    rv = None if running_var is None else _wrap(np.tile(running_var._data, n))
    out = batch_norm(folded, _tile(weight, n), _tile(bias, n), rm, rv, use_input_stats,
                     momentum, eps).view(shape)
    if use_input_stats:
        for run, tiled in ((running_mean, rm), (running_var, rv)):
            if run is not None and tiled is not None:
                run._data[...] = tiled._data.reshape(n, c).mean(0)
    return out


def instance_norm(input: Tensor, weight, bias, running_mean, running_var, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    return _f_instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                            momentum, eps)


register("instance_norm", instance_norm)
register_functional("instance_norm", _f_instance_norm)


# --- group_norm ------------------------------------------------------------------------------


native_group_norm_backward = op(
    "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, "
    "Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> "
    "(Tensor, Tensor, Tensor)", _group_norm_backward_forward, function=False,
    method=False)


def _group_norm_composite(grad, input, weight, N, group, eps, mask):
    shape = tuple(input.shape)
    nd = len(shape)
    per_group = shape[1] // group * math.prod(shape[2:])  # (-1 is ambiguous for no samples)
    xg = input.reshape(N, group, per_group)
    mean = xg.mean(2, True)
    xc = xg - mean
    rstd = _rsqrt((xc * xc).mean(2, True) + eps)
    xhat = xc * rstd
    gi = gw = gb = None
    if mask[0]:
        gx = grad if weight is None else grad * _channel_view(weight, nd)
        gx = gx.reshape(N, group, per_group)
        gi = (rstd * (gx - gx.mean(2, True) - xhat * (gx * xhat).mean(2, True))).reshape(shape)
    axes = list(_bn_axes(nd))
    if mask[1]:
        gw = (grad * xhat.reshape(shape)).sum(axes)
    if mask[2]:
        gb = grad.sum(axes)
    return gi, gw, gb


def _group_norm_grads(grads, input, weight, N, C, HxW, group, eps, result1, result2,
                      output_mask):
    grad = grads[0]
    if grad is None:
        grad = _wrap(np.zeros(input._data.shape, input._data.dtype))
    if _fused_wanted():
        gi, gw, gb = native_group_norm_backward(grad, input, result1, result2, weight, N, C,
                                                HxW, group, list(output_mask))
    else:
        gi, gw, gb = _group_norm_composite(grad, input, weight, N, group, eps, output_mask)
    # torch adds the mean / rstd gradients only when both arrived (else ignores them)
    if output_mask[0] and grads[1] is not None and grads[2] is not None:
        gi = gi + _stats_grad(grads[1], grads[2], input, N, group, eps)
    return gi, gw, gb


def _stats_grad(gmean, grstd, input: Tensor, N: int, group: int, eps: float) -> Tensor:
    """Gradient reaching the input through the mean / rstd outputs."""
    xg = input.reshape(N, group, -1)
    m = xg.shape[2]
    xc = xg - xg.mean(2, True)
    rstd = _rsqrt((xc * xc).mean(2, True) + eps)
    out = gmean.reshape(N, group, 1) / m + grstd.reshape(N, group, 1) * (
        rstd * rstd * rstd) * xc * (-1.0 / m)
    return out.reshape(tuple(input.shape))


native_group_norm = op(
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
    "SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)", _group_norm_forward,
    # torch marks mean / rstd of group_norm as requiring grad (their gradient is ignored)
    grads={"input, weight, bias": _group_norm_grads}, method=False)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{len(shape)}")
    n, c = shape[0], shape[1]
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(shape)} and num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.ndim != 1 or p.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(p.shape)} and "
                               f"input of shape {list(shape)}")
    return native_group_norm(input, weight, bias, n, c, math.prod(shape[2:]), num_groups,
                             eps)[0]


def _f_group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
                  bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    return group_norm(input, num_groups, weight, bias, eps)


register("group_norm", group_norm)
register_functional("group_norm", _f_group_norm)


# --- rms_norm (composite in torch too: x * rsqrt(mean(x^2) + eps) * weight) -------------------


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    if not isinstance(normalized_shape, (list, tuple)):  # as torch's parser (layer_norm's too)
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type_name(normalized_shape)}")
    # torch's rms_norm words the shape as [*3] (layer_norm: [*, 3])
    _check_layer_norm(tuple(input.shape), tuple(normalized_shape), weight, None, star="*")
    if eps is None:
        bf16 = input.dtype.name == "bfloat16"
        eps = 0.0078125 if bf16 else float(np.finfo(input._data.dtype).eps)
    dims = list(_ln_axes(input.ndim, normalized_shape))
    out = input * _rsqrt((input * input).mean(dims, True) + eps)
    return out if weight is None else out * weight


register("rms_norm", rms_norm)
register_functional("rms_norm", rms_norm)


# --- normalize (composite in torch: input / max(norm, eps)) ----------------------------------


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom if out is None else out.copy_(input / denom)


register_functional("normalize", normalize)
