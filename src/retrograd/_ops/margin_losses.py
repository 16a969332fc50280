"""Margin losses: multi_margin_loss and multilabel_margin_loss (ops of their own in torch, nodes
MultiMarginLossBackward0 and MultilabelMarginLossBackward0), and the triplet losses (composites
of pairwise distances, clamp_min and a reduction, as torch builds them).

The hinge gradients are written with retrograd ops (multilabel's through piecewise-constant
coefficients from a NumPy kernel), so they differentiate again where torch stops. The kernels
are in kernels/margin_losses.py.
"""

from __future__ import annotations

from collections.abc import Callable

from retrograd._ops import comparison as C
from retrograd._ops import pointwise as P
from retrograd._ops.creation import arange
from retrograd._ops.distance import pairwise_distance
from retrograd._ops.kernels.loss import _legacy_enum, reduction_enum
from retrograd._ops.kernels.margin_losses import (
    multi_margin_forward,
    multilabel_margin_coefficients,
    multilabel_margin_forward,
)
from retrograd._ops.layout import label_entry_points
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor


def _frames(shape: tuple) -> tuple:
    if len(shape) == 2:
        return shape
    return (1, shape[0]) if len(shape) == 1 else (1, 1)


def _per_frame_grad(grad: Tensor, reduction: int, nframe: int) -> Tensor:
    """The incoming gradient of each frame's loss, as a column to broadcast over classes."""
    if reduction == 0:
        return grad.reshape(-1, 1)
    if reduction == 1 and nframe:
        return grad / nframe
    return grad


# --- multi_margin_loss ------------------------------------------------------------------------


def _multi_margin_grad(grad, self, target, p, margin, weight, reduction):
    """Each counted hinge z = margin - x[y] + x[j] (j != y, z > 0) adds dh/dz * w[y] / dim to
    x[j] and takes it from x[y]; dh/dz is 1 for p = 1 and 2z for p = 2."""
    nframe, dim = _frames(tuple(self.shape))
    x = self.reshape(nframe, dim)
    y = target.reshape(nframe, 1)
    z = margin - x.gather(1, y) + x
    other = C.ne(arange(dim, device=self.device), y)
    scale = _per_frame_grad(grad, reduction, nframe) / dim
    if weight is not None:
        scale = scale * weight.index_select(0, y.reshape(-1)).reshape(nframe, 1)
    value = z * (scale * 2) if p == 2 else scale
    counted = P.where(C.logical_and(C.gt(z, 0), other), value, 0.0)
    to_target = P.where(other, 0.0, counted.sum(1, keepdim=True))
    return (counted - to_target).reshape(self.shape)


_multi_margin_loss = op(
    "multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, "
    "Tensor? weight=None, int reduction=1) -> Tensor", multi_margin_forward,
    grads={"self": _multi_margin_grad}, function=False, method=False)


def _not_differentiable(name: str, arg: str, t) -> None:
    from retrograd._autograd.state import state

    if t is not None and t.requires_grad and state.grad_enabled:
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to "
                           f"argument '{arg}'. This input cannot have requires_grad True.")


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    code = _legacy_enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _not_differentiable("multi_margin_loss", "weight", weight)
    return _multi_margin_loss(input, target, p, margin, weight, code)


# --- multilabel_margin_loss -------------------------------------------------------------------


_multilabel_margin_coefficients = op(
    "_multilabel_margin_coefficients(Tensor self, Tensor target) -> Tensor",
    multilabel_margin_coefficients, function=False, method=False)


def _multilabel_margin_grad(grad, self, target, reduction):
    nframe, _ = _frames(tuple(self.shape))
    coef = _multilabel_margin_coefficients(self.detach(), target)
    return _per_frame_grad(grad, reduction if target.dim() > 1 else 2, nframe) * coef


_multilabel_margin_loss = op(
    "multilabel_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    multilabel_margin_forward, grads={"self": _multilabel_margin_grad},
    function=False, method=False)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    return _multilabel_margin_loss(input, target, _legacy_enum(size_average, reduce, reduction))


# --- triplet losses ---------------------------------------------------------------------------


def _check_margin(margin: float) -> None:
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, "
                           f"and negative {n}D inputs")


def _reduce(loss: Tensor, reduction: int) -> Tensor:
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


def _triplet(anchor: Tensor, positive: Tensor, negative: Tensor, distance: Callable,
             margin: float, swap: bool, reduction: int) -> Tensor:
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6, swap: bool = False,
                        reduction: int = 0) -> Tensor:
    """torch.triplet_margin_loss (reduction as torch's enum; by default none, as torch's
    binding: NOTE [Binding reduction default])."""
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative,
                    lambda x1, x2: pairwise_distance(x1, x2, p, eps), margin, swap, reduction)


def _f_triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                           margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                           swap: bool = False, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    code = _legacy_enum(size_average, reduce, reduction)
    _check_margin(margin)
    return triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, code)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_margin(margin)
    _check_triplet_dims(anchor, positive, negative)
    distance = distance_function if distance_function is not None else pairwise_distance
    return _triplet(anchor, positive, negative, distance, margin, swap,
                    reduction_enum(reduction))


register("triplet_margin_loss", triplet_margin_loss)
register_functional("triplet_margin_loss", _f_triplet_margin_loss)
register_functional("triplet_margin_with_distance_loss", triplet_margin_with_distance_loss)
register_functional("multi_margin_loss", multi_margin_loss)
register_functional("multilabel_margin_loss", multilabel_margin_loss)
label_entry_points([_multi_margin_loss, _multilabel_margin_loss])
