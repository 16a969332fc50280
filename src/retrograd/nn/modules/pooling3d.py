"""3-d pooling layers (max, average, adaptive average and max) over (N, C, D, H, W) input."""

from __future__ import annotations

from typing import Any

from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn.modules.pooling import (
    _AdaptiveAvgPoolNd,
    _AdaptiveMaxPoolNd,
    _AvgPoolDivisorNd,
    _MaxPoolNd,
)

__all__ = ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d"]


class MaxPool3d(_MaxPoolNd):
    def forward(self, input: Tensor) -> Any:
        return nn.functional.max_pool3d(input, self.kernel_size, self.stride, self.padding,
                                        self.dilation, ceil_mode=self.ceil_mode,
                                        return_indices=self.return_indices)


class AvgPool3d(_AvgPoolDivisorNd):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.avg_pool3d(input, self.kernel_size, self.stride, self.padding,
                                        self.ceil_mode, self.count_include_pad,
                                        self.divisor_override)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("padding", 0)
        self.__dict__.setdefault("ceil_mode", False)
        self.__dict__.setdefault("count_include_pad", True)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    def forward(self, input: Tensor) -> Any:
        return nn.functional.adaptive_max_pool3d(input, self.output_size, self.return_indices)
