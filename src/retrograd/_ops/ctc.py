"""The CTC loss: _ctc_loss as an op of its own (node CtcLossBackward0; its Tensor-lengths
overload CtcLossBackward1), ctc_loss as torch composes it (zero_infinity's where, the 'mean'
division by the target lengths, the unbatched squeeze), F.ctc_loss on top.

The gradient is the NumPy beta recursion (_ctc_loss_backward), whose own derivative torch does
not implement: its node is torch's NotImplemented, so a double backward raises as in torch.
The kernels are in kernels/ctc.py.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.creation import tensor as _tensor
from retrograd._ops.kernels.ctc import ctc_backward, ctc_forward
from retrograd._ops.kernels.loss import reduction_enum
from retrograd._ops.layout import label_entry_points, not_implemented
from retrograd._ops.overloads import GROUPS, _invalid_call, composite, overloaded
from retrograd._ops.pointwise import _no_derivative, _not_implemented_node, where
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor


def _lengths(values) -> list:
    """An int[] argument or a lengths tensor as a list of ints (a tensor flattened)."""
    if isinstance(values, np.ndarray):
        return [int(v) for v in values.reshape(-1)]
    if isinstance(values, Tensor):
        return [int(v) for v in values.detach().numpy().reshape(-1)]
    return [int(v) for v in values]


def _check_dtype(log_probs: np.ndarray) -> None:
    if log_probs.dtype not in (np.float32, np.float64):
        raise not_implemented("ctc_loss_cpu", log_probs.dtype)


def _forward(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    _check_dtype(log_probs)
    return ctc_forward(log_probs, targets, _lengths(input_lengths), _lengths(target_lengths),
                       blank)


def _backward_kernel(grad, log_probs, targets, input_lengths, target_lengths,
                     neg_log_likelihood, log_alpha, blank, zero_infinity=False):
    _check_dtype(log_probs)
    return ctc_backward(grad, log_probs, targets, _lengths(input_lengths),
                        _lengths(target_lengths), neg_log_likelihood, log_alpha, blank,
                        zero_infinity)


_ctc_loss_backward = _not_implemented_node(op(
    "_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, "
    "int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, "
    "bool zero_infinity=False) -> Tensor", _backward_kernel,
    grads={"grad, log_probs": _no_derivative("_ctc_loss_backward")}, method=False))


def _grad(grad, log_probs, targets, input_lengths, target_lengths, result0, result1, blank,
          zero_infinity):
    return _ctc_loss_backward(grad, log_probs, targets, _lengths(input_lengths),
                              _lengths(target_lengths), result0, result1, blank, zero_infinity)


_ctc_loss_int = op(
    "_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "
    "int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)", _forward,
    node="CtcLossBackward0", differentiable_outputs=(True, False),
    grads={"log_probs": _grad}, method=False)

_ctc_loss_tensor = op(
    "_ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, "
    "Tensor target_lengths, int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)",
    _forward, node="CtcLossBackward1", differentiable_outputs=(True, False),
    grads={"log_probs": _grad}, method=False)


def _ctc_loss_impl(log_probs: Tensor, targets: Tensor, input_lengths: list,
                   target_lengths: list, blank: int, reduction: int,
                   zero_infinity: bool) -> Tensor:
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    res = _ctc_loss_int(lp, targets.to(D.int64), input_lengths, target_lengths, blank,
                        zero_infinity)[0]
    if zero_infinity:
        res = where(res == float("inf"), _tensor(0.0, dtype=res.dtype), res)
    if reduction == 1:
        divisor = _tensor(target_lengths, dtype=res.dtype).clamp_min(1)
        return (res / divisor).mean()
    if reduction == 2:
        return res.sum()
    return res if batched else res.squeeze(0)


def _ctc_loss_lists(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths,
                    blank: int = 0, reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    return _ctc_loss_impl(log_probs, targets, _lengths(input_lengths), _lengths(target_lengths),
                          blank, reduction, zero_infinity)


def _ctc_loss_tensors(log_probs: Tensor, targets: Tensor, input_lengths: Tensor,
                      target_lengths: Tensor, blank: int = 0, reduction: int = 1,
                      zero_infinity: bool = False) -> Tensor:
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        dt = lengths.dtype
        if dt.is_floating_point or dt.is_complex or dt == D.bool:
            raise RuntimeError(f"{name} must be integral")
    return _ctc_loss_impl(log_probs, targets, _lengths(input_lengths), _lengths(target_lengths),
                          blank, reduction, zero_infinity)


composite("ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, "
          "int[] target_lengths, int blank=0, int reduction=1, bool zero_infinity=False) "
          "-> Tensor", _ctc_loss_lists, method=False)
composite("ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, "
          "Tensor target_lengths, int blank=0, int reduction=1, bool zero_infinity=False) "
          "-> Tensor", _ctc_loss_tensors, method=False)


def _kind(lengths) -> type | None:
    if isinstance(lengths, Tensor):
        return Tensor
    return list if isinstance(lengths, (list, tuple)) else None


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """F.ctc_loss: torch.ctc_loss with the reduction given by name."""
    args = [log_probs, targets, input_lengths, target_lengths, blank, reduction_enum(reduction),
            zero_infinity]
    kinds = {_kind(input_lengths), _kind(target_lengths)}
    if len(kinds) > 1 or None in kinds:
        # every argument is passed on, so torch's error lists all of them
        raise _invalid_call(GROUPS[(False, "ctc_loss")], args, {})
    return overloaded("ctc_loss")(*args)


register_functional("ctc_loss", ctc_loss)
label_entry_points([_ctc_loss_int, _ctc_loss_tensor, _ctc_loss_backward])
