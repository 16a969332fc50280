"""NumPy kernels of losses: reductions, elementwise losses (mse, smooth_l1, huber, bce,
soft_margin), nll_loss / nll_loss2d with their checks and input-gradient arrays.
retrograd._ops.loss declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._ops.kernels.pointwise import NEG_BOOL
from retrograd._ops.layout import not_implemented, type_name

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def reduction_enum(reduction: str) -> int:
    """torch's _Reduction.get_enum: 'none' 0, 'mean' 1, 'sum' 2."""
    if reduction == "elementwise_mean":
        _ws.warn("reduction='elementwise_mean' is deprecated, please use reduction='mean' "
                 "instead.", stacklevel=3)
        return 1
    try:
        return _REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """The reduction string for the deprecated size_average / reduce arguments."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    out = "mean" if size_average and reduce else "sum" if reduce else "none"
    _ws.warn(f"size_average and reduce args will be deprecated, please use "
             f"reduction='{out}' instead.", stacklevel=3)
    return out


def _reduce(loss: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == 0:
        return loss
    with np.errstate(invalid="ignore", divide="ignore"):
        out = loss.mean() if reduction == 1 else loss.sum()
    return np.asarray(out, dtype=loss.dtype)


def _scale(reduction: int, shape: tuple) -> float:
    """The factor a mean reduction puts on every element's gradient."""
    if reduction != 1:
        return 1.0
    n = 1
    for s in shape:
        n *= s
    return 1.0 / n if n else float("nan")


def broadcast_shape(a: tuple, b: tuple) -> tuple:
    nd = max(len(a), len(b))
    out = []
    for i in range(nd):
        x = a[i - nd + len(a)] if i >= nd - len(a) else 1
        y = b[i - nd + len(b)] if i >= nd - len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _floating_only(kernel: str, dtype: np.dtype) -> None:
    """torch's loss kernels are dispatched for floating dtypes only."""
    if dtype.kind not in "fV":
        raise not_implemented(kernel, dtype)


def _mse_forward(a, b, reduction):
    broadcast_shape(a.shape, b.shape)
    _floating_only("mse_cpu", np.result_type(a, b))
    d = np.subtract(a, b)
    if type(d) is not np.ndarray:  # 0-d operands give a NumPy scalar: nothing to write into
        return _reduce(np.asarray(d * d), reduction)
    return _reduce(np.multiply(d, d, out=d), reduction)


def _smooth_l1_forward(a, b, reduction, beta):
    broadcast_shape(a.shape, b.shape)
    _floating_only("smooth_l1_cpu", np.result_type(a, b))
    z = np.abs(np.subtract(a, b))
    beta = a.dtype.type(beta) if a.dtype.kind == "f" else beta
    loss = np.where(z < beta, 0.5 * z * z / beta if beta else z, z - 0.5 * beta)
    return _reduce(loss.astype(z.dtype, copy=False), reduction)


def _huber_forward(a, b, reduction, delta):
    broadcast_shape(a.shape, b.shape)
    _floating_only("huber_cpu", np.result_type(a, b))
    z = np.abs(np.subtract(a, b))
    delta = a.dtype.type(delta) if a.dtype.kind == "f" else delta
    loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    return _reduce(loss.astype(z.dtype, copy=False), reduction)


def _bce_forward(x, t, weight, reduction):
    if not np.all((x >= 0) & (x <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore"):
        lx = np.maximum(np.log(x), -100)
        l1x = np.maximum(np.log1p(-x), -100)
    loss = (t - 1) * l1x - t * lx
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.astype(x.dtype, copy=False), reduction)


def _bce_logits_forward(x, t, weight, pos_weight, reduction):
    # softplus(-x) = log(1 + exp(-x)) without overflow
    sp = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)
    if pos_weight is not None:
        loss = (1 - t) * x + (1 + (pos_weight - 1) * t) * sp
    else:
        loss = (1 - t) * x + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.astype(x.dtype, copy=False), reduction)


def _check_target(t: np.ndarray) -> None:
    if t.dtype != np.int64 and t.dtype != np.uint8:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{type_name(t.dtype)}")


def _plain_targets(t, weight, ignore_index) -> bool:
    """The common case, checked with one reduction: int64 targets, none negative (so none is
    ignored when ignore_index is negative, as its default), no class weights. Targets past the
    last class still make the gather raise, and the general path then reports them."""
    return (weight is None and t.dtype == np.int64 and ignore_index < 0 and t.size > 0
            and np.minimum.reduce(t, axis=None) >= 0)


def _nll_parts(x, t, weight, ignore_index):
    """(picked log-probs, per-element weights or None for all ones, target positions) along
    the class axis 1."""
    if _plain_targets(t, weight, ignore_index):
        try:
            return x[np.arange(t.shape[0]), t], None, t
        except IndexError:
            pass  # a target out of range: the checks below say which, as torch does
    _check_target(t)
    t = t.astype(np.int64, copy=False)
    n_classes = x.shape[1]
    ignore = t == ignore_index
    ignored = bool(ignore.any())
    pos = np.where(ignore, 0, t) if ignored else t
    if pos.size and (pos.min() < 0 or pos.max() >= n_classes):
        bad = ~ignore & ((t < 0) | (t >= n_classes))
        raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
    picked = x[np.arange(pos.shape[0]), pos]
    if weight is None and not ignored:
        return picked, None, pos
    w = np.ones(pos.shape, x.dtype) if weight is None else weight.astype(x.dtype)[pos]
    if ignored:
        w[ignore] = 0
    return picked, w, pos


def _as_batch(x, t):
    """nll_loss takes (C,) with a 0-d (or size-1) target as a batch of one."""
    if x.ndim == 1:
        return x[None], t.reshape(1)
    return x, t


def _nll_forward(x, t, weight, reduction, ignore_index):
    _check_nll_shapes(x, t, weight)
    return _nll_core(x, t, weight, reduction, ignore_index)


def _nll_core(x, t, weight, reduction, ignore_index):
    xb, tb = _as_batch(x, t)
    picked, w, _ = _nll_parts(xb, tb, weight, ignore_index)
    loss = np.negative(picked) if w is None else -picked * w
    if reduction == 0:
        return loss.reshape(t.shape if x.ndim > 1 else ()), np.asarray(0, x.dtype)
    total = np.asarray(loss.shape[0] if w is None else w.sum(dtype=x.dtype), x.dtype)
    out = np.add.reduce(loss, dtype=x.dtype)
    if reduction == 1:
        out = _over_total(out, total)
    return np.asarray(out, x.dtype), total


def _over_total(x, total):
    """x / total; a zero total (every target ignored) gives nan silently, as torch. (total may
    be an array: one total per target, for a batch of examples under vmap.)"""
    if np.ndim(total) == 0 and total != 0:
        return x / total
    with np.errstate(invalid="ignore", divide="ignore"):
        return x / total


def _check_nll_shapes(x, t, weight) -> None:
    if not 0 < x.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if t.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if x.ndim == 1 and t.ndim == 1 and t.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                           f"{t.shape[0]}")
    if x.ndim == 2 and (t.ndim == 0 or x.shape[0] != t.shape[0]):
        raise RuntimeError(f"size mismatch (got input: {list(x.shape)}, target: "
                           f"{list(t.shape)})")
    c = x.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.size != c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")


def _check_nll2d_shapes(x, t, weight) -> None:
    if t.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {t.ndim}")
    if x.ndim != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got "
                           f"input of dimension: {x.ndim}")
    if weight is not None and weight.size != x.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if x.shape[0] != t.shape[0] or x.shape[2:] != t.shape[1:]:
        raise RuntimeError(f"size mismatch (got input: {list(x.shape)} , target: "
                           f"{list(t.shape)}")


def _nll2d_forward(x, t, weight, reduction, ignore_index):
    _check_nll2d_shapes(x, t, weight)
    n, c = x.shape[:2]
    # classes last, spatial positions folded into the batch
    flat = np.moveaxis(x, 1, -1).reshape(-1, c)
    out, total = _nll_core(flat, t.reshape(-1), weight, reduction, ignore_index)
    return (out.reshape(t.shape) if reduction == 0 else out), total


def _nll_grad_matrix(dtype, self_shape, t, w, reduction, ignore_index, total_weight,
                     class_axis: int) -> np.ndarray:
    """M, holding -weight[t] (/ total_weight for mean) at each target position: the input's
    gradient is grad * M."""
    c = self_shape[class_axis]
    tm = t.reshape(-1)
    if _plain_targets(tm, w, ignore_index) and class_axis == len(self_shape) - 1:
        # every target counts once with weight 1: -1 (/ total for mean) at each target
        m = np.zeros((tm.shape[0], c), dtype)
        m[np.arange(tm.shape[0]), tm] = -1 / total_weight if reduction == 1 else -1
        return m.reshape(c) if class_axis == 0 else m
    ignore = tm == ignore_index
    pos = np.where(ignore, 0, tm)
    vals = -(np.ones(pos.shape, dtype) if w is None else w.astype(dtype)[pos])
    if reduction == 1:
        vals = _over_total(vals, total_weight)
    vals[ignore] = 0
    m = np.zeros((pos.size, c), dtype)
    m[np.arange(pos.size), pos] = vals
    if class_axis == 0:
        return m.reshape(c)
    if len(self_shape) == 2:
        return m
    lead = (self_shape[0],) + tuple(self_shape[2:])
    return np.ascontiguousarray(np.moveaxis(m.reshape(lead + (c,)), -1, class_axis))


def _nll_grad_input_array(grad, self_shape, target, weight, reduction, ignore_index,
                          total_weight, class_axis: int):
    """_nll_grad_input on arrays (NOTE [Array formulas])."""
    m = _nll_grad_matrix(grad.dtype, self_shape, target, weight, reduction, ignore_index,
                         total_weight, class_axis)
    if reduction == 0 and len(self_shape) > 1:
        grad = np.expand_dims(grad, class_axis)
    return np.multiply(grad, m, out=m)


def _check_smoothing(label_smoothing: float) -> None:
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")


def _legacy_enum(size_average, reduce, reduction: str) -> int:
    return reduction_enum(legacy_reduction(size_average, reduce, reduction))


def _soft_margin_forward(x, t, reduction):
    broadcast_shape(x.shape, t.shape)
    if x.dtype.kind in "biu":  # torch writes exp(-x * t) into an output of x's dtype
        if x.dtype.kind == "b":
            raise RuntimeError(NEG_BOOL)
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{type_name(x.dtype)}")
    return _reduce(np.log1p(np.exp(-x * t)), reduction)
