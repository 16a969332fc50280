"""Normalization: layer_norm, batch_norm, group_norm (torch's native_* ops), instance_norm,
rms_norm.

Each native op has a fused NumPy forward and a fused NumPy backward op. As PyTorch does for
layer_norm, the derivative formula uses the fused backward when no graph of the gradient is being
built, and otherwise a composite of retrograd ops (so double backward works); both compute the
same math:
    xhat = (x - mean) * rstd,   gxhat = grad * weight
    grad_input = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))   (means over the
    normalized elements), grad_weight = sum(grad * xhat), grad_bias = sum(grad).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from retrograd._autograd.state import state
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor, _wrap

_HALF_KINDS = ("float16", "bfloat16")
_NO_STATS = (True, False, False)  # mean / rstd outputs carry no gradient, as in torch


def _opmath(a: np.ndarray) -> np.dtype:
    """The dtype torch computes in: float32 for half-precision inputs."""
    return np.dtype(np.float32) if a.dtype.itemsize <= 2 else a.dtype


def _empty(dtype) -> np.ndarray:
    return np.empty((0,), dtype)


# --- shared NumPy cores ----------------------------------------------------------------------


def _quiet_if_empty(fn):
    """Statistics over no elements are nan, as torch gives them silently; NumPy warns."""

    def wrapped(x, *args):
        if x.size:
            return fn(x, *args)
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(x, *args)

    return wrapped


@_quiet_if_empty
def _normalize(x: np.ndarray, axes: tuple, eps: float):
    """(xhat, mean, rstd, biased var) over `axes` (kept as size-1 dims), computed in opmath."""
    mean = x.mean(axis=axes, keepdims=True)
    xc = x - mean
    var = np.mean(xc * xc, axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    xc *= rstd
    return xc, mean, rstd, var


def _affine(xhat: np.ndarray, w, b) -> np.ndarray:
    if w is not None:
        xhat *= w
    if b is not None:
        xhat += b
    return xhat


@_quiet_if_empty
def _norm_grads(g, x, mean, rstd, w, stat_axes: tuple, param_axes: tuple, mask: tuple):
    """Fused backward: (grad_input, grad_weight, grad_bias), params summed over param_axes."""
    xhat = (x - mean) * rstd
    gw = _reduce(g * xhat, param_axes) if mask[1] else None
    gb = _reduce(g, param_axes) if mask[2] else None
    gi = None
    if mask[0]:
        gx = g * w if w is not None else g
        m1 = gx.mean(axis=stat_axes, keepdims=True)
        m2 = np.mean(gx * xhat, axis=stat_axes, keepdims=True)
        gi = rstd * (gx - m1 - xhat * m2)
    return gi, gw, gb


def _reduce(a: np.ndarray, axes: tuple) -> np.ndarray:
    return a.sum(axis=axes) if axes else a


def _out(a, dtype) -> np.ndarray:
    return _empty(dtype) if a is None else np.ascontiguousarray(a, dtype=dtype)


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
    """Use the fused NumPy backward unless the gradient must itself be differentiable."""
    from retrograd._ops import dispatch

    return not state.grad_enabled and not dispatch.mode_stack


# --- layer_norm ------------------------------------------------------------------------------


def _check_layer_norm(shape: tuple, normalized_shape: tuple, weight, bias,
                      star: str = "*, ") -> None:
    ns = list(normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and list(p.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(p.shape)} and normalized_shape = {ns}")
    if len(shape) < len(ns) or list(shape[len(shape) - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={ns}, expected input with shape "
                           f"[{star}{', '.join(str(s) for s in ns)}], but got input of size"
                           f"{list(shape)}")


def _ln_axes(ndim: int, normalized_shape) -> tuple:
    return tuple(range(ndim - len(normalized_shape), ndim))


# NOTE [Layer norm by rows]
# Layer norm normalizes the trailing dims: on a row-major (rows, n) view of the input, its
# statistics and its weight/bias gradients are sums along rows or down columns, which a
# matrix-vector product with a vector of ones computes (BLAS, 4x NumPy's reduction along the
# last axis here); the input is taken in the dtype torch computes in (float32 for 16-bit).


def _row_sums(a: np.ndarray) -> np.ndarray:
    return a @ np.ones(a.shape[1], a.dtype)


def _column_sums(a: np.ndarray) -> np.ndarray:
    return np.ones(a.shape[0], a.dtype) @ a


def _layer_norm_forward(x, normalized_shape, weight, bias, eps):
    _check_layer_norm(x.shape, tuple(normalized_shape), weight, bias)
    xo = np.ascontiguousarray(x, dtype=_opmath(x))
    k = len(normalized_shape)
    stat_shape = x.shape[:x.ndim - k] + (1,) * k
    if xo.size == 0:
        xhat, mean, rstd, _ = _normalize(xo, _ln_axes(x.ndim, normalized_shape), eps)
    else:
        n = math.prod(x.shape[x.ndim - k:])
        rows = xo.reshape(-1, n)
        mean = _row_sums(rows) / n
        xhat = rows - mean[:, None]
        var = _row_sums(np.square(xhat)) / n
        rstd = 1.0 / np.sqrt(var + eps)
        xhat *= rstd[:, None]
        xhat = xhat.reshape(x.shape)
    out = _affine(xhat, weight, bias)
    return (out.astype(x.dtype, copy=False), mean.reshape(stat_shape).astype(x.dtype),
            rstd.reshape(stat_shape).astype(x.dtype))


def _layer_norm_backward_forward(g, x, normalized_shape, mean, rstd, weight, bias, output_mask):
    axes = _ln_axes(x.ndim, normalized_shape)
    lead = tuple(range(x.ndim - len(axes)))
    mask = tuple(output_mask)
    mask = (mask[0], mask[1] and weight is not None, mask[2] and bias is not None)
    if x.size == 0:
        gi, gw, gb = _norm_grads(g, x, mean, rstd, weight, axes, lead, mask)
    else:
        gi, gw, gb = _layer_norm_rows_backward(g, x, mean, rstd, weight, mask,
                                               tuple(normalized_shape))
    return _out(gi, x.dtype), _out(gw, x.dtype), _out(gb, x.dtype)


def _layer_norm_rows_backward(g, x, mean, rstd, weight, mask: tuple, normalized_shape: tuple):
    """_norm_grads for layer norm, by rows (NOTE [Layer norm by rows])."""
    dt = _opmath(x)
    n = math.prod(normalized_shape)
    g2 = np.asarray(g, dtype=dt).reshape(-1, n)
    xhat = np.asarray(x, dtype=dt).reshape(-1, n) - np.asarray(mean, dtype=dt).reshape(-1, 1)
    r = np.asarray(rstd, dtype=dt).reshape(-1, 1)
    xhat *= r
    gw = _column_sums(g2 * xhat).reshape(normalized_shape) if mask[1] else None
    gb = _column_sums(g2).reshape(normalized_shape) if mask[2] else None
    gi = None
    if mask[0]:
        gx = g2 * np.asarray(weight, dtype=dt).reshape(n) if weight is not None else g2
        m1 = _row_sums(gx) / n
        m2 = _row_sums(gx * xhat) / n
        xhat *= m2[:, None]
        gi = gx - m1[:, None]
        gi -= xhat
        gi *= r
        gi = gi.reshape(x.shape)
    return gi, gw, gb


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


def _shape_arg(fn: str, normalized_shape) -> list:
    if isinstance(normalized_shape, int):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of "
                        "ints, not int")
    return list(normalized_shape)


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


def _bn_axes(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _channel_view(a, ndim: int):
    """A (C,) array or tensor shaped to broadcast against (N, C, *)."""
    if a is None:
        return None
    return a.reshape((1, -1) + (1,) * (ndim - 2)) if ndim > 2 else a


def _check_batch_norm(x, weight, bias, running_mean, running_var) -> None:
    if x.ndim < 2:
        raise ValueError(f"Expected 2D or 3D input (got {x.ndim}D input)")
    c = x.shape[1]
    for name, p in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if p is not None and p.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {p.size}")


def _batch_norm_forward(x, weight, bias, running_mean, running_var, training, momentum, eps):
    _check_batch_norm(x, weight, bias, running_mean, running_var)
    nd = x.ndim
    xo = np.ascontiguousarray(x, dtype=_opmath(x))
    w, b = _channel_view(weight, nd), _channel_view(bias, nd)
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        rstd = 1.0 / np.sqrt(_channel_view(running_var, nd).astype(xo.dtype) + eps)
        out = _affine((xo - _channel_view(running_mean, nd)) * rstd, w, b)
        return out.astype(x.dtype, copy=False), _empty(x.dtype), _empty(x.dtype)
    axes = _bn_axes(nd)
    xhat, mean, rstd, var = _normalize(xo, axes, eps)
    _update_running(x.size // max(mean.size, 1), mean, var, running_mean, running_var,
                    momentum)
    out = _affine(xhat, w, b)
    return (out.astype(x.dtype, copy=False), mean.reshape(-1).astype(x.dtype),
            rstd.reshape(-1).astype(x.dtype))


def _update_running(n: int, mean, var, running_mean, running_var, momentum) -> None:
    """running = (1 - momentum) * running + momentum * batch stat (variance unbiased), in place."""
    if running_mean is not None:
        new = (1 - momentum) * running_mean + momentum * mean.reshape(-1)
        running_mean[...] = new.astype(running_mean.dtype, copy=False)
    if running_var is not None:
        unbiased = var.reshape(-1) * (n / (n - 1) if n > 1 else np.inf)
        new = (1 - momentum) * running_var + momentum * unbiased
        running_var[...] = new.astype(running_var.dtype, copy=False)


def _batch_norm_backward_forward(g, x, weight, running_mean, running_var, save_mean,
                                 save_invstd, train, eps, output_mask):
    nd = x.ndim
    axes = _bn_axes(nd)
    mask = (output_mask[0], output_mask[1] and weight is not None, output_mask[2])
    w = _channel_view(weight, nd)
    if train:
        mean, rstd = _channel_view(save_mean, nd), _channel_view(save_invstd, nd)
        gi, gw, gb = _norm_grads(g, x, mean, rstd, w, axes, axes, mask)
    else:
        mean = _channel_view(running_mean, nd)
        rstd = 1.0 / np.sqrt(_channel_view(running_var, nd) + eps)
        gi, gw, gb = _norm_grads(g, x, mean, rstd, w, axes, axes, (False,) + mask[1:])
        if mask[0]:
            gi = g * (rstd * w if w is not None else rstd)
    return _out(gi, x.dtype), _out(gw, x.dtype), _out(gb, x.dtype)


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
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)[0]


def _check_values_per_channel(shape: tuple) -> None:
    n = shape[0]
    for s in shape[2:]:
        n *= s
    if n == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         f"torch.Size({list(shape)})")


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
            if run is not None:
                run._data[...] = tiled._data.reshape(n, c).mean(0)
    return out


def instance_norm(input: Tensor, weight, bias, running_mean, running_var, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    return _f_instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                            momentum, eps)


register("instance_norm", instance_norm)
register_functional("instance_norm", _f_instance_norm)


# --- group_norm ------------------------------------------------------------------------------


def _group_norm_forward(x, weight, bias, N, C, HxW, group, eps):
    nd = x.ndim
    xo = np.ascontiguousarray(x, dtype=_opmath(x)).reshape(N, group, C // group * HxW)
    xhat, mean, rstd, _ = _normalize(xo, (2,), eps)
    out = _affine(xhat.reshape(x.shape), _channel_view(weight, nd), _channel_view(bias, nd))
    return (out.astype(x.dtype, copy=False), mean.reshape(N, group).astype(x.dtype),
            rstd.reshape(N, group).astype(x.dtype))


def _group_norm_backward_forward(g, x, mean, rstd, weight, N, C, HxW, group, output_mask):
    nd = x.ndim
    gx = g * _channel_view(weight, nd) if weight is not None else g
    m3, r3 = mean.reshape(N, group, 1), rstd.reshape(N, group, 1)
    gi = gw = gb = None
    grouped = (N, group, C // group * HxW)  # explicit: -1 is ambiguous for an empty batch
    if output_mask[0]:
        gi, _, _ = _norm_grads(gx.reshape(grouped), x.reshape(grouped), m3, r3, None,
                               (2,), (), (True, False, False))
        gi = gi.reshape(x.shape)
    axes = _bn_axes(nd)
    if output_mask[1] and weight is not None:
        xhat = ((x.reshape(grouped) - m3) * r3).reshape(x.shape)
        gw = (g * xhat).sum(axis=axes)
    if output_mask[2]:
        gb = g.sum(axis=axes)
    return _out(gi, x.dtype), _out(gw, x.dtype), _out(gb, x.dtype)


native_group_norm_backward = op(
    "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, "
    "Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> "
    "(Tensor, Tensor, Tensor)", _group_norm_backward_forward, function=False,
    method=False)


def _group_norm_composite(grad, input, weight, N, group, eps, mask):
    shape = tuple(input.shape)
    nd = len(shape)
    xg = input.reshape(N, group, -1)
    mean = xg.mean(2, True)
    xc = xg - mean
    rstd = _rsqrt((xc * xc).mean(2, True) + eps)
    xhat = xc * rstd
    gi = gw = gb = None
    if mask[0]:
        gx = grad if weight is None else grad * _channel_view(weight, nd)
        gx = gx.reshape(N, group, -1)
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
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
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
