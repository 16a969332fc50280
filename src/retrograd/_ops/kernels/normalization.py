"""NumPy kernels of normalization: layer_norm, batch_norm and group_norm forwards and fused
backwards, running-statistics updates, torch's checks. retrograd._ops.normalization declares the
ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from retrograd._ops.kernels.reduction import column_sums, row_sums
from retrograd._ops.layout import not_implemented


def _opmath(a: np.ndarray) -> np.dtype:
    """The dtype torch computes in: float32 for half-precision inputs."""
    return np.dtype(np.float32) if a.dtype.itemsize <= 2 else a.dtype


def _empty(dtype) -> np.ndarray:
    return np.empty((0,), dtype)


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


# NOTE [Layer norm by rows]
# Layer norm normalizes the trailing dims: on a row-major (rows, n) view of the input, its
# statistics and its weight/bias gradients are sums along rows or down columns, which a
# matrix-vector product with a vector of ones computes (BLAS, 4x NumPy's reduction along the
# last axis here); the input is taken in the dtype torch computes in (float32 for 16-bit).


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
        mean = row_sums(rows) / n
        xhat = rows - mean[:, None]
        var = row_sums(np.square(xhat)) / n
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
    gw = column_sums(g2 * xhat).reshape(normalized_shape) if mask[1] else None
    gb = column_sums(g2).reshape(normalized_shape) if mask[2] else None
    gi = None
    if mask[0]:
        gx = g2 * np.asarray(weight, dtype=dt).reshape(n) if weight is not None else g2
        m1 = row_sums(gx) / n
        m2 = row_sums(gx * xhat) / n
        xhat *= m2[:, None]
        gi = gx - m1[:, None]
        gi -= xhat
        gi *= r
        gi = gi.reshape(x.shape)
    return gi, gw, gb


def _shape_arg(fn: str, normalized_shape) -> list:
    if isinstance(normalized_shape, int):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of "
                        "ints, not int")
    return list(normalized_shape)


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
    # in torch's order: the running statistics first, then the affine parameters
    for name, p in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
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


def _check_values_per_channel(shape: tuple) -> None:
    n = shape[0]
    for s in shape[2:]:
        n *= s
    if n == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         f"torch.Size({list(shape)})")


# NOTE [Group norm by channel]
# Group norm is computed as torch's CPU kernel computes it: statistics per (sample, group), then
# one scale and shift per (sample, channel), so the forward writes x * scale + shift (two passes
# where normalize-then-affine takes four), and the backward needs only two sums per (sample,
# channel), of dy * x and of dy, after which grad_input is c1 * dy + c2 * x + c3 with
# coefficients per (sample, channel). Sums along rows are matrix products (BLAS).


def _row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The dot product of each row of a with the same row of b, (R, K) -> (R,)."""
    return (a[:, None, :] @ b[:, :, None]).reshape(a.shape[0])


def _per_channel(a: np.ndarray, N: int, C: int, group: int) -> np.ndarray:
    """A per-(sample, group) array repeated for each channel of its group, as (N * C, 1)."""
    return np.broadcast_to(a.reshape(N, group, 1), (N, group, C // group)).reshape(N * C, 1)


@_quiet_if_empty
def _group_norm_forward(x, weight, bias, N, C, HxW, group, eps):
    if x.dtype.kind not in "fV":
        raise not_implemented("GroupNormKernelImpl", x.dtype)
    dt = _opmath(x)
    k = C // group * HxW
    rows = np.ascontiguousarray(x, dtype=dt).reshape(N * group, k)
    mean = row_sums(rows) / dt.type(k)
    centered = rows - mean[:, None]
    rstd = 1.0 / np.sqrt(_row_dots(centered, centered) / dt.type(k) + dt.type(eps))
    scale = _per_channel(rstd, N, C, group)
    if weight is not None:
        scale = scale * np.tile(weight.astype(dt), N).reshape(N * C, 1)
    shift = -scale * _per_channel(mean, N, C, group)
    if bias is not None:
        shift += np.tile(bias.astype(dt), N).reshape(N * C, 1)
    out = rows.reshape(N * C, HxW) * scale
    out += shift
    return (out.reshape(x.shape).astype(x.dtype, copy=False),
            mean.reshape(N, group).astype(x.dtype), rstd.reshape(N, group).astype(x.dtype))


@_quiet_if_empty
def _group_norm_backward_forward(g, x, mean, rstd, weight, N, C, HxW, group, output_mask):
    dt = _opmath(x)
    per_group = C // group
    dy = np.ascontiguousarray(g, dtype=dt).reshape(N * C, HxW)
    xs = np.ascontiguousarray(x, dtype=dt).reshape(N * C, HxW)
    ds = _row_dots(dy, xs).reshape(N, group, per_group)  # sum of dy * x per (sample, channel)
    db = row_sums(dy).reshape(N, group, per_group)  # sum of dy
    m3 = mean.astype(dt).reshape(N, group, 1)
    r3 = rstd.astype(dt).reshape(N, group, 1)
    w3 = None if weight is None else weight.astype(dt).reshape(1, group, per_group)
    gi = gw = gb = None
    if output_mask[0]:
        ds_w = (ds if w3 is None else ds * w3).sum(2, keepdims=True)
        db_w = (db if w3 is None else db * w3).sum(2, keepdims=True)
        inv_n = dt.type(1.0 / (per_group * HxW)) if per_group * HxW else dt.type(0)
        c2 = (db_w * m3 - ds_w) * r3 * r3 * r3 * inv_n
        c3 = -c2 * m3 - db_w * r3 * inv_n
        c1 = np.broadcast_to(r3 if w3 is None else r3 * w3, (N, group, per_group))
        gi = dy * c1.reshape(N * C, 1)
        gi += xs * _per_channel(c2, N, C, group)
        gi += _per_channel(c3, N, C, group)
        gi = gi.reshape(x.shape)
    if output_mask[1] and weight is not None:
        gw = ((ds - db * m3) * r3).sum(0).reshape(C)
    if output_mask[2]:
        gb = db.sum(0).reshape(C)
    return _out(gi, x.dtype), _out(gw, x.dtype), _out(gb, x.dtype)
