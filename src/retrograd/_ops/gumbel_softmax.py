"""gumbel_softmax: softmax((logits + Gumbel noise) / tau), optionally made one-hot with the
straight-through trick, built as torch builds it. The noise is -log of exponential draws, torch's
under the same seed."""

from __future__ import annotations

from retrograd import _warning_site as _ws
from retrograd._ops.reduction import softmax
from retrograd._ops.registry import register_functional
from retrograd._tensor import Tensor


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    if eps != 1e-10:
        _ws.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -logits.new_empty(tuple(logits.shape)).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = logits.new_zeros(tuple(logits.shape)).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


register_functional("gumbel_softmax", gumbel_softmax)
