"""Pooling layers: max, average and adaptive pooling (1-D and 2-D)."""

from __future__ import annotations

from typing import Any

from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn.modules._elsewhere import elsewhere
from retrograd.nn.modules.module import Module
from retrograd.nn.modules.utils import _single

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    def forward(self, input: Tensor) -> Any:
        return nn.functional.max_pool1d(input, self.kernel_size, self.stride, self.padding,
                                        self.dilation, ceil_mode=self.ceil_mode,
                                        return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    def forward(self, input: Tensor) -> Any:
        return nn.functional.max_pool2d(input, self.kernel_size, self.stride, self.padding,
                                        self.dilation, ceil_mode=self.ceil_mode,
                                        return_indices=self.return_indices)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                                        self.ceil_mode, self.count_include_pad)


class _AvgPoolDivisorNd(_AvgPoolNd):
    """The 2-d and 3-d average pools' arguments (they take divisor_override; 1-d does not)."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override


class AvgPool2d(_AvgPoolDivisorNd):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.avg_pool2d(input, self.kernel_size, self.stride, self.padding,
                                        self.ceil_mode, self.count_include_pad,
                                        self.divisor_override)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    def forward(self, input: Tensor) -> Any:
        return nn.functional.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    def forward(self, input: Tensor) -> Any:
        return nn.functional.adaptive_max_pool2d(input, self.output_size, self.return_indices)

# torch's module path for these names, whose classes live in other files
_HOMES = {
    "MaxPool3d": "pooling3d", "AvgPool3d": "pooling3d", "AdaptiveMaxPool3d": "pooling3d",
    "AdaptiveAvgPool3d": "pooling3d", "MaxUnpool1d": "unpooling", "MaxUnpool2d": "unpooling",
    "MaxUnpool3d": "unpooling", "_MaxUnpoolNd": "unpooling", "FractionalMaxPool2d":
    "fractional_pooling", "FractionalMaxPool3d": "fractional_pooling", "LPPool1d":
    "lp_pooling", "LPPool2d": "lp_pooling", "LPPool3d": "lp_pooling", "_LPPoolNd":
    "lp_pooling"}
__getattr__ = elsewhere(__name__, _HOMES)
__all__ += [name for name in _HOMES if not name.startswith("_")]
