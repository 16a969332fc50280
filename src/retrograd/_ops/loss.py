"""Losses: nll_loss, cross_entropy, mse/l1/smooth_l1/huber, binary cross entropy (with logits),
kl_div.

The losses torch implements as single ops (nll_loss_forward, mse_loss, smooth_l1_loss,
huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits) are declared ops with a fused
NumPy forward; their gradients are short retrograd expressions, so they differentiate again.
Piecewise slopes (smooth_l1, huber, clamps) use constant masks computed from the saved inputs.
The losses torch composes (cross_entropy, l1_loss, kl_div) are composed here the same way, so the
result's grad_fn is torch's.

The NumPy kernels the declarations run are in kernels/loss.py.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._ops import dispatch
from retrograd._ops.creation import full_like, ones_like, zeros_like
from retrograd._ops.kernels.loss import (
    _bce_forward,
    _bce_logits_forward,
    _check_smoothing,
    _huber_forward,
    _legacy_enum,
    _mse_forward,
    _nll2d_forward,
    _nll_forward,
    _nll_grad_input_array,
    _nll_grad_matrix,
    _scale,
    _smooth_l1_forward,
    _soft_margin_forward,
    broadcast_shape,
    legacy_reduction,
    reduction_enum,
)
from retrograd._ops.kernels.pointwise import SUB_BOOLS
from retrograd._ops.layout import not_implemented, type_name
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor, _is_wrapper, _wrap

_BCE_EPS = 1e-12  # torch clamps (1 - x) * x from below by this in binary_cross_entropy backward
SIZE_WARNING = (
    "Using a target size ({}) that is different to the input size ({}). This will likely lead "
    "to incorrect results due to broadcasting. Please ensure they have the same size.")
BCE_SIZE = ("Using a target size ({}) that is different to the input size ({}) is deprecated. "
            "Please ensure they have the same size.")
KL_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


# --- reduction arguments ---------------------------------------------------------------------


def _apply_reduction(t: Tensor, reduction: str) -> Tensor:
    code = reduction_enum(reduction)
    return t if code == 0 else t.mean() if code == 1 else t.sum()


def _const(a: np.ndarray, like: Tensor) -> Tensor:
    """A constant (no grad) tensor of `like`'s dtype, for masks and slopes in formulas."""
    return _wrap(np.asarray(a, dtype=like._data.dtype))


def _warn_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        _ws.warn(SIZE_WARNING.format(_size_str(target), _size_str(input)), stacklevel=3)


def _size_str(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


# --- mse_loss --------------------------------------------------------------------------------


def _mse_grads(grad, self, target, reduction, output_mask):
    d = self - target
    g = grad * (d * (2.0 * _scale(reduction, tuple(d.shape))))
    return (g if output_mask[0] else None), (-g if output_mask[1] else None)


mse_loss = op("mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", _mse_forward,
              promote="all", grads={"self, target": _mse_grads}, function=False, method=False)


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str, mean_by_weight=True):
    """torch's Python-side weighting of mse/l1/huber losses."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    out = loss * weight
    if reduction == "none":
        return out
    if reduction == "sum":
        return out.sum()
    if reduction == "mean":
        return out.sum() / weight.sum() if mean_by_weight else out.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _f_mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                reduction: str = "mean", weight=None) -> Tensor:
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        broadcast_shape(tuple(input.shape), tuple(target.shape))
        d = input - target
        return _weighted(d * d, weight, input, reduction)
    return mse_loss(input, target, reduction_enum(reduction))


register_functional("mse_loss", _f_mse_loss)


# --- l1_loss (composite in torch) ------------------------------------------------------------


def _f_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
               reduction: str = "mean", weight=None) -> Tensor:
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input, target, weight = dispatch.autocast.cast("fp32", input, target, weight)
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    broadcast_shape(tuple(input.shape), tuple(target.shape))
    loss = (input - target).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction)
    return _apply_reduction(loss, reduction)


register_functional("l1_loss", _f_l1_loss)


# --- smooth_l1_loss / huber_loss -------------------------------------------------------------


def _piecewise_slope(d: Tensor, width: float, inner_gain: float, outer: float) -> Tensor:
    """d * inner_gain where |d| < width, else outer * sign(d): the slope of smooth_l1/huber."""
    dd = d.detach()  # masks and signs from tensor ops, so a batched d (vmap) is read per example
    inside = (dd.abs() < width).to(d.dtype)
    return d * (inside * inner_gain) + dd.sign() * outer * (1 - inside)


def _smooth_l1_grads(grad, self, target, reduction, beta, output_mask):
    d = self - target
    slope = _piecewise_slope(d, beta, 1.0 / beta if beta else 0.0, 1.0)
    g = grad * (slope * _scale(reduction, tuple(d.shape)))
    return (g if output_mask[0] else None), (-g if output_mask[1] else None)


smooth_l1_loss = op(
    "smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor",
    _smooth_l1_forward, promote="all", grads={"self, target": _smooth_l1_grads},
    function=False, method=False)


def _f_smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                      reduction: str = "mean", beta: float = 1.0) -> Tensor:
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return _f_l1_loss(input, target, reduction=reduction)
    return smooth_l1_loss(input, target, reduction_enum(reduction), beta)


register_functional("smooth_l1_loss", _f_smooth_l1_loss)


def _huber_grads(grad, self, target, reduction, delta, output_mask):
    d = self - target
    slope = _piecewise_slope(d, delta, 1.0, delta)
    g = grad * (slope * _scale(reduction, tuple(d.shape)))
    return (g if output_mask[0] else None), (-g if output_mask[1] else None)


huber_loss = op(
    "huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.0) -> Tensor",
    _huber_forward, promote="all", grads={"self, target": _huber_grads}, function=False,
    method=False)


def _f_huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
                  weight=None) -> Tensor:
    _warn_size(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        return _weighted(huber_loss(input, target, 0, delta), weight, input, reduction,
                         mean_by_weight=False)
    return huber_loss(input, target, reduction_enum(reduction), delta)


register_functional("huber_loss", _f_huber_loss)


# --- binary_cross_entropy --------------------------------------------------------------------


def _bce_grads(grad, self, target, weight, reduction, output_mask):
    g = grad * _scale(reduction, tuple(self.shape))
    if weight is not None:
        g = g * weight
    gs = gt = None
    if output_mask[0]:
        denom = (1 - self) * self
        dd = denom.detach()
        # torch divides by max((1 - x) * x, 1e-12); the offset keeps that value exactly
        denom = denom + (dd.clamp_min(_BCE_EPS) - dd)
        gs = g * (self - target) / denom
    if output_mask[1]:
        gt = g * ((1 - self).log() - self.log())
    return gs, gt


binary_cross_entropy = op(
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) "
    "-> Tensor", _bce_forward, grads={"self, target": _bce_grads}, function=False, method=False)


def _f_binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                            reduce=None, reduction: str = "mean") -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(BCE_SIZE.format(_size_str(target), _size_str(input)))
    if weight is not None:
        weight = weight.expand(broadcast_shape(tuple(target.shape), tuple(weight.shape)))
    return binary_cross_entropy(input, target, weight, reduction_enum(reduction))


register_functional("binary_cross_entropy", _f_binary_cross_entropy)


# --- binary_cross_entropy_with_logits -------------------------------------------------------


def _softplus_neg(x: Tensor) -> Tensor:
    """softplus(-x) = log(1 + exp(-|x|)) + max(-x, 0), with |x| and max from constant masks."""
    xd = x.detach()
    return (1 + (x * -xd.sign()).exp()).log() - x * (xd < 0).to(x.dtype)


def _bce_logits_grads(grad, self, target, weight, pos_weight, reduction, output_mask):
    g = grad * _scale(reduction, tuple(self.shape))
    if weight is not None:
        g = g * weight
    gs = gt = None
    if output_mask[0]:
        sig = self.sigmoid()
        if pos_weight is not None:
            pt = pos_weight * target
            gs = g * ((pt + 1 - target) * sig - pt)
        else:
            gs = g * (sig - target)
    if output_mask[1]:
        if pos_weight is not None:
            gt = g * ((pos_weight - 1) * _softplus_neg(self) - self)
        else:
            gt = -g * self
    return gs, gt


binary_cross_entropy_with_logits = op(
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, int reduction=1) -> Tensor", _bce_logits_forward,
    grads={"self, target": _bce_logits_grads}, function=False, method=False)


def _check_bce_logits_dtypes(input: Tensor, target: Tensor) -> None:
    """torch's kernel takes log_sigmoid of the input, then scales (1 - target) in place: an
    integral input or target is refused there."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise not_implemented("log_sigmoid_cpu", input._data.dtype)
    if target.dtype is D.bool:  # torch computes 1 - target
        raise RuntimeError(SUB_BOOLS)
    if not (target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError(f"result type {D.legacy_name(input.dtype)} can't be cast to the "
                           f"desired output type {type_name(target._data.dtype)}")


def _torch_bce_with_logits(input: Tensor, target: Tensor, weight=None, pos_weight=None,
                           reduction: int = 0) -> Tensor:
    _check_bce_logits_dtypes(input, target)
    # torch's Python binding of the top-level function defaults to no reduction (NOTE [Binding
    # reduction default])
    return binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


register("binary_cross_entropy_with_logits", _torch_bce_with_logits)


def _f_bce_with_logits(input: Tensor, target: Tensor, weight=None, size_average=None,
                       reduce=None, reduction: str = "mean", pos_weight=None) -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size_str(target)}) must be the same as input size "
                         f"({_size_str(input)})")
    _check_bce_logits_dtypes(input, target)
    return binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                            reduction_enum(reduction))


register_functional("binary_cross_entropy_with_logits", _f_bce_with_logits)


# --- nll_loss --------------------------------------------------------------------------------


# wrapper class -> the formula below for a target of that class, or NotImplemented (vmap's
# batched values have one: M made for the whole batch on arrays, then one product)
nll_grad_input_for: dict = {}


def _nll_grad_input(grad, self_shape, target, weight, reduction, ignore_index, total_weight,
                    class_axis: int):
    """grad * M (see _nll_grad_matrix)."""
    if any(a.__class__ is not Tensor and _is_wrapper(a) for a in (grad, target, total_weight)):
        special = nll_grad_input_for.get(target.__class__)
        if special is not None:
            out = special(grad, self_shape, target, weight, reduction, ignore_index,
                          total_weight, class_axis)
            if out is not NotImplemented:
                return out
        return _nll_grad_input_ops(grad, self_shape, target, weight, reduction, ignore_index,
                                   total_weight, class_axis)
    if dispatch.mode_stack and not dispatch.only_subclass_mode():
        # a mode may be recording (a compiler's tracer): M in ops, made from the target each
        # time, not an array it would keep as a constant
        return _nll_grad_input_ops(grad, self_shape, target, weight, reduction, ignore_index,
                                   total_weight, class_axis)
    m = _nll_grad_matrix(grad._data.dtype, self_shape, target._data,
                         None if weight is None else weight._data, reduction, ignore_index,
                         total_weight._data, class_axis)
    return nll_grad_times(grad, _wrap(m), self_shape, reduction, class_axis)


def nll_grad_times(grad, m, self_shape, reduction: int, class_axis: int):
    """The input's gradient from M: grad * M, grad given one class axis for reduction="none"
    (its shape is the target's)."""
    g = grad.unsqueeze(class_axis) if reduction == 0 and len(self_shape) > 1 else grad
    return g * m


def _nll_grad_input_ops(grad, self_shape, target, weight, reduction, ignore_index,
                        total_weight, class_axis: int):
    """_nll_grad_input in ops: for wrapper tensors, whose arrays hold no values (NOTE [Wrapper
    subclasses]), and while a mode may be recording. M is made as _nll_grad_matrix makes it,
    in the same order (-weight[t], over the total for a mean, 0 for an ignored target), so the
    result is the array form's bit for bit."""
    from retrograd import where
    from retrograd._ops.creation import full, zeros

    keep = target != ignore_index
    pos = target * keep  # ignored targets point at class 0, where their 0 is written
    if weight is None:
        vals = full(list(pos.shape), -1.0, dtype=grad.dtype)
    else:
        vals = weight.to(grad.dtype).index_select(0, pos.reshape(-1)).reshape(pos.shape).neg()
    if reduction == 1:
        vals = vals / total_weight
    # (selected, not multiplied by the mask: with every target ignored a mean's total is 0, and
    # 0 * inf would be nan where torch's gradient is 0)
    vals = where(keep, vals, 0.0)
    if len(self_shape) > 1:
        pos, vals = pos.unsqueeze(class_axis), vals.unsqueeze(class_axis)
    else:
        pos, vals = pos.reshape(1), vals.reshape(1)
    m = zeros(list(self_shape), dtype=grad.dtype).scatter(class_axis, pos, vals)
    return nll_grad_times(grad, m, self_shape, reduction, class_axis)


nll_loss_forward = op(
    "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index) -> (Tensor output, Tensor total_weight)", _nll_forward,
    node="NllLossBackward0", differentiable_outputs=(True, False),
    grads={"self": lambda grad, self_shape, target, weight, reduction, ignore_index,
           total_weight: _nll_grad_input(grad, self_shape, target, weight, reduction,
                                         ignore_index, total_weight,
                                         1 if len(self_shape) > 1 else 0)},
    array_grads={"self": lambda grad, self_shape, target, weight, reduction, ignore_index,
                 total_weight: _nll_grad_input_array(grad, self_shape, target, weight,
                                                     reduction, ignore_index, total_weight,
                                                     1 if len(self_shape) > 1 else 0)},
    function=False, method=False)

nll_loss2d_forward = op(
    "nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index) -> (Tensor output, Tensor total_weight)", _nll2d_forward,
    node="NllLoss2DBackward0", differentiable_outputs=(True, False),
    grads={"self": lambda grad, self_shape, target, weight, reduction, ignore_index,
           total_weight: _nll_grad_input(grad, self_shape, target, weight, reduction,
                                         ignore_index, total_weight, 1)},
    array_grads={"self": lambda grad, self_shape, target, weight, reduction, ignore_index,
                 total_weight: _nll_grad_input_array(grad, self_shape, target, weight,
                                                     reduction, ignore_index, total_weight,
                                                     1)},
    function=False, method=False)


def nll_loss_nd(input: Tensor, target: Tensor, weight=None, reduction: int = 1,
                ignore_index: int = -100) -> Tensor:
    """torch's nll_loss_nd: 1-2-D inputs use nll_loss, others nll_loss2d (N, C, 1, -1)."""
    shape = input._data.shape
    if len(shape) < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {len(shape)})")
    tshape = target._data.shape
    if len(shape) != 1 and (not tshape or shape[0] != tshape[0]):
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size "
                         f"({tshape[0] if tshape else 0}).")
    if len(shape) <= 2:
        return nll_loss_forward(input, target, weight, reduction, ignore_index)[0]
    if len(shape) == 4:
        return nll_loss2d_forward(input, target, weight, reduction, ignore_index)[0]
    out_size = (shape[0],) + shape[2:]
    if tshape != out_size:
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(tshape)}")
    n, c = shape[:2]
    empty = input.numel() == 0
    x4 = input.reshape((n, c, 0, 0) if empty else (n, c, 1, -1))
    t3 = target.reshape((n, 0, 0) if empty else (n, 1, -1))
    out = nll_loss2d_forward(x4, t3, weight, reduction, ignore_index)[0]
    return out.view(out_size) if reduction == 0 else out


def _f_nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
                ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    _check_tensors("nll_loss_nd", input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    return nll_loss_nd(input, target, weight, reduction_enum(reduction), ignore_index)


register_functional("nll_loss", _f_nll_loss)


# --- cross_entropy (composite in torch: log_softmax + nll_loss) ------------------------------


def _log_softmax(x: Tensor, dim: int) -> Tensor:
    # through the namespace: the profiler's ranged version is the one found there
    from retrograd import log_softmax

    return log_softmax(x, dim)


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    shape = [1] * ndim
    shape[class_dim] = -1
    return weight.reshape(shape)


def _ce_prob_target(input: Tensor, target: Tensor, weight, reduction: int,
                    label_smoothing: float) -> Tensor:
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    logp = _log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, input.ndim, class_dim)
    if reduction == 0:
        return -prod.sum(class_dim)
    if reduction == 2:
        return -prod.sum()
    n = input.numel()
    if n == 0:
        return -prod.sum() * float("nan")
    return -prod.sum() / (n // n_classes)


def _ce_label_smoothing(input: Tensor, target: Tensor, weight, reduction: int,
                        ignore_index: int, label_smoothing: float) -> Tensor:
    class_dim = 0 if input.ndim == 1 else 1
    logp = _log_softmax(input, class_dim)
    nll = nll_loss_nd(logp, target, weight, reduction, ignore_index)
    n_classes = input.shape[class_dim]
    keep = target._data != ignore_index
    if weight is not None:
        smooth = -(logp * _class_view(weight, input.ndim, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth * _const(keep, smooth)
    if reduction == 1:
        t = target._data[keep]
        denom = weight._data[t].sum() if weight is not None else keep.sum()
        ret = smooth.sum() / _const(denom, smooth)
    elif reduction == 2:
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_classes)


def cross_entropy_loss(input: Tensor, target: Tensor, weight=None, reduction: int = 1,
                       ignore_index: int = -100, label_smoothing: float = 0.0) -> Tensor:
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input, target, weight = dispatch.autocast.cast("fp32", input, target, weight)
    if input._data.shape == target._data.shape:
        if not target.is_floating_point():
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {D.legacy_name(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        _check_smoothing(label_smoothing)
        return _ce_prob_target(input, target, weight, reduction, label_smoothing)
    _check_smoothing(label_smoothing)
    if label_smoothing > 0.0:
        return _ce_label_smoothing(input, target, weight, reduction, ignore_index,
                                   label_smoothing)
    class_dim = 0 if input.ndim == 1 else 1
    return nll_loss_nd(_log_softmax(input, class_dim), target, weight, reduction, ignore_index)


def _check_tensors(fn: str, input, target) -> None:
    """torch's argument check: the loss functions take tensors, nothing else."""
    for pos, (name, value) in enumerate((("input", input), ("target", target)), 1):
        if not isinstance(value, Tensor):
            kind = type(value)
            module = kind.__module__.split(".")[0]
            shown = kind.__name__ if module == "builtins" else f"{module}.{kind.__name__}"
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{shown}")


def _f_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                     ignore_index: int = -100, reduce=None, reduction: str = "mean",
                     label_smoothing: float = 0.0) -> Tensor:
    _check_tensors("cross_entropy_loss", input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    return cross_entropy_loss(input, target, weight, reduction_enum(reduction), ignore_index,
                              label_smoothing)


register_functional("cross_entropy", _f_cross_entropy)


# --- kl_div (composite in torch) -------------------------------------------------------------


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False):
    """torch.kl_div (its Python binding defaults to no reduction, as here)."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or \
            not (target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input, target = dispatch.autocast.cast("fp32", input, target)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # xlogy(target, target): 0 where target == 0
        loss = target * (target + (target.detach() == 0).to(target.dtype)).log() - target * input
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


def _f_kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
              reduction: str = "mean", log_target: bool = False) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        _ws.warn(KL_MEAN_WARNING, stacklevel=2)
    if reduction == "batchmean":
        code = 2
    else:
        code = reduction_enum(reduction)
    out = kl_div(input, target, code, log_target=log_target)
    if reduction == "batchmean" and input.ndim != 0:
        out = out / input.shape[0]
    return out


register("kl_div", kl_div)
register_functional("kl_div", _f_kl_div)


# --- margin and embedding losses (composites in torch, except soft_margin_loss) -------------


def _reduce_tensor(t: Tensor, reduction: int) -> Tensor:
    """torch's apply_loss_reduction. (The top-level functions below default to no reduction,
    as torch's bindings: NOTE [Binding reduction default].)"""
    return t if reduction == 0 else t.mean() if reduction == 1 else t.sum()


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input1, input2, target = dispatch.autocast.cast("fp32", input1, input2, target)
    difference = input1 - input2  # first, as torch's (two bool inputs are refused here)
    return _reduce_tensor((-target * difference + margin).clamp_min(0), reduction)


def _f_margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                           size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    code = _legacy_enum(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size_str(input1)}, input2: {_size_str(input2)}, target: "
            f"{_size_str(target)} ")
    return margin_ranking_loss(input1, input2, target, float(margin), code)


register("margin_ranking_loss", margin_ranking_loss)
register_functional("margin_ranking_loss", _f_margin_ranking_loss)


def _where(mask, a: Tensor, b: Tensor) -> Tensor:
    """where with a boolean mask, a tensor (from tensor ops, batched under vmap) or an array."""
    from retrograd import where

    return where(mask if isinstance(mask, Tensor) else _wrap(np.asarray(mask)), a, b)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input, target = dispatch.autocast.cast("fp32", input, target)
    zeros = zeros_like(input)
    t = target.detach()
    # torch's C++ `margin - input` fills a tensor like input with margin, then subtracts: an
    # integral input keeps its dtype (the margin truncated)
    margin_part = _where(t != 1, (full_like(input, margin) - input).clamp_min(0), zeros)
    self_part = _where(t != -1, input, zeros)
    return _reduce_tensor(margin_part + self_part, reduction)


def _f_hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                            size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    return hinge_embedding_loss(input, target, margin,
                                _legacy_enum(size_average, reduce, reduction))


register("hinge_embedding_loss", hinge_embedding_loss)
register_functional("hinge_embedding_loss", _f_hinge_embedding_loss)


_COS_EPS = 1e-12  # torch's EPSILON in cosine_embedding_loss


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input1, input2, target = dispatch.autocast.cast("fp32", input1, input2, target)
    nd1, nd2, ndt = input1.ndim, input2.ndim, target.ndim
    if ndt > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if nd1 != nd2 or nd1 != ndt + 1:
        raise RuntimeError(f"{ndt}D target tensor expects {ndt + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = 1 if ndt == 1 else 0
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + _COS_EPS
    mag2 = (input2 * input2).sum(dim) + _COS_EPS
    cos = prod / (mag1 * mag2).sqrt()
    zeros = zeros_like(cos)
    t = target.detach()
    out = _where(t == 1, 1 - cos, zeros) + _where(t == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce_tensor(out, reduction)


def _f_cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                             size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    return cosine_embedding_loss(input1, input2, target, margin,
                                 _legacy_enum(size_average, reduce, reduction))


register("cosine_embedding_loss", cosine_embedding_loss)
register_functional("cosine_embedding_loss", _f_cosine_embedding_loss)


def _soft_margin_grad(grad, self, target, reduction):
    # d/dz log(1 + exp(z)) = sigmoid(z), z = -self * target
    z = -(self * target)
    return grad * _scale(reduction, tuple(z.shape)) * z.sigmoid() * -target


soft_margin_loss = op("soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
                      _soft_margin_forward, promote="all", grads={"self": _soft_margin_grad},
                      function=False, method=False)


def _f_soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    from retrograd._autograd.state import state

    if target.requires_grad and state.grad_enabled:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    return soft_margin_loss(input, target, _legacy_enum(size_average, reduce, reduction))


register_functional("soft_margin_loss", _f_soft_margin_loss)


def _f_multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None,
                                   size_average=None, reduce=None,
                                   reduction: str = "mean") -> Tensor:
    from retrograd._ops.activation import log_sigmoid as logsigmoid

    reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()


register_functional("multilabel_soft_margin_loss", _f_multilabel_soft_margin_loss)


# --- poisson / gaussian negative log likelihood ----------------------------------------------


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input, target = dispatch.autocast.cast("fp32", input, target)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        # Stirling's approximation of log(target!), only where target > 1
        t = target.detach()
        big = t > 1
        safe = target + _where(big, zeros_like(t), 2 - t)  # keeps log finite elsewhere
        stirling = safe * safe.log() - safe + 0.5 * (2 * np.pi * safe).log()
        loss = loss + stirling * big.to(stirling.dtype)
    return _reduce_tensor(loss, reduction)


def _f_poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,
                        full: bool = False, size_average=None, eps: float = 1e-8, reduce=None,
                        reduction: str = "mean") -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return poisson_nll_loss(input, target, log_input, full, eps, reduction_enum(reduction))


register("poisson_nll_loss", poisson_nll_loss)
register_functional("poisson_nll_loss", _f_poisson_nll_loss)


def _f_gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False,
                         eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ones_like(input) * var  # as torch: an integral input gives a float var
    elif bool((var.detach() < 0).any()):  # data-dependent: refused under vmap, as torch's
        raise ValueError("var has negative entry/entries")
    in_shape, var_shape = tuple(input.shape), tuple(var.shape)
    if var_shape != in_shape:
        if in_shape[:-1] == var_shape:
            var = var.unsqueeze(-1)
        elif not (len(in_shape) == len(var_shape) and sum(
                y for x, y in zip(in_shape, var_shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # clamp for stability without a gradient through the clamp, as torch: in place on a copy
    # under no_grad (an integral var is refused there, with torch's message)
    from retrograd.autograd.grad_mode import no_grad

    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * float(np.log(2 * np.pi))
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


register_functional("gaussian_nll_loss", _f_gaussian_nll_loss)
