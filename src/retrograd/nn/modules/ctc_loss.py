"""nn.CTCLoss over F.ctc_loss."""

from __future__ import annotations

from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn.modules.loss import _Loss

__all__ = ["CTCLoss"]


class CTCLoss(_Loss):
    __constants__ = ["blank", "reduction"]
    blank: int
    zero_infinity: bool

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Tensor,
                target_lengths: Tensor) -> Tensor:
        return nn.functional.ctc_loss(log_probs, targets, input_lengths, target_lengths,
                                      self.blank, self.reduction, self.zero_infinity)
