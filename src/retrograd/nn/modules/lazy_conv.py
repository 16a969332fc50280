"""LazyConv1d/2d/3d and LazyConvTranspose1d/2d/3d: in_channels read from the first input.

Each is built as its convolution with no channels and no bias (nothing to initialize yet), then
given UninitializedParameters; the first call reads in_channels from the input's channel
dimension, materializes and initializes the weight and bias as the convolution does, and the
module becomes that convolution (LazyModuleMixin).
"""

from __future__ import annotations

from typing import Any

from retrograd._tensor import Tensor
from retrograd.nn.modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from retrograd.nn.modules.lazy import LazyModuleMixin
from retrograd.nn.parameter import UninitializedParameter

__all__ = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


class _LazyConvXdMixin(LazyModuleMixin):
    groups: int
    transposed: bool
    in_channels: int
    out_channels: int
    kernel_size: tuple

    def _make_lazy(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        me: Any = self
        me.weight = UninitializedParameter(device=device, dtype=dtype)
        me.out_channels = out_channels
        if bias:
            me.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any,  # type: ignore[override]
                              **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        me: Any = self
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        me.weight.materialize(shape)
        if me.bias is not None:
            me.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = len(self.kernel_size) + 1  # channels and the spatial dims
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class _LazyConvNd(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class _LazyConvTransposeNd(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device=device, dtype=dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConvNd, Conv1d):  # type: ignore[misc]
    """A Conv1d whose in_channels is inferred from input.size(1) on the first call."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvNd, Conv2d):  # type: ignore[misc]
    """A Conv2d whose in_channels is inferred from input.size(1) on the first call."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvNd, Conv3d):  # type: ignore[misc]
    """A Conv3d whose in_channels is inferred from input.size(1) on the first call."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTransposeNd, ConvTranspose1d):  # type: ignore[misc]
    """A ConvTranspose1d whose in_channels is inferred from input.size(1) on the first call."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeNd, ConvTranspose2d):  # type: ignore[misc]
    """A ConvTranspose2d whose in_channels is inferred from input.size(1) on the first call."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeNd, ConvTranspose3d):  # type: ignore[misc]
    """A ConvTranspose3d whose in_channels is inferred from input.size(1) on the first call."""

    cls_to_become = ConvTranspose3d
