"""Loss modules: thin wrappers over retrograd.nn.functional's losses.

Class weights (and BCEWithLogitsLoss's pos_weight) are buffers, as in torch, so they follow
`.to()` and appear in state_dict when given.
"""

from __future__ import annotations

from retrograd import _warning_site as _ws
from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn.modules._elsewhere import elsewhere
from retrograd.nn.modules.module import Module

__all__ = ["L1Loss", "NLLLoss", "KLDivLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss",
           "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss"]


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """The reduction named by the deprecated size_average/reduce flags (None means True)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    out = "mean" if size_average and reduce else "sum" if reduce else "none"
    _ws.warn(f"size_average and reduce args will be deprecated, please use "
             f"reduction='{out}' instead.", stacklevel=4)
    return out


class _Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nn.functional.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nn.functional.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    __constants__ = ["ignore_index", "reduction"]

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nn.functional.nll_loss(input, target, weight=self.weight,
                                      ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nn.functional.cross_entropy(input, target, weight=self.weight,
                                           ignore_index=self.ignore_index,
                                           reduction=self.reduction,
                                           label_smoothing=self.label_smoothing)


class KLDivLoss(_Loss):
    __constants__ = ["reduction"]

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nn.functional.kl_div(input, target, reduction=self.reduction,
                                    log_target=self.log_target)


class BCELoss(_WeightedLoss):
    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nn.functional.binary_cross_entropy(input, target, weight=self.weight,
                                                  reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nn.functional.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    __constants__ = ["reduction"]

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nn.functional.smooth_l1_loss(input, target, reduction=self.reduction,
                                            beta=self.beta)


class HuberLoss(_Loss):
    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nn.functional.huber_loss(input, target, reduction=self.reduction,
                                        delta=self.delta)

# torch's module path for these names, whose classes live in other files
_HOMES = {
    "NLLLoss2d": "deprecated", "PoissonNLLLoss": "margin_loss", "GaussianNLLLoss":
    "margin_loss", "HingeEmbeddingLoss": "margin_loss", "MultiLabelMarginLoss": "margin_loss",
    "SoftMarginLoss": "margin_loss", "MultiLabelSoftMarginLoss": "margin_loss",
    "CosineEmbeddingLoss": "margin_loss", "MarginRankingLoss": "margin_loss",
    "MultiMarginLoss": "margin_loss", "TripletMarginLoss": "margin_loss",
    "TripletMarginWithDistanceLoss": "margin_loss", "CTCLoss": "ctc_loss",
    "LinearCrossEntropyLoss": "linear_cross_entropy"}
__getattr__ = elsewhere(__name__, _HOMES)
__all__ += [name for name in _HOMES if not name.startswith("_")]
