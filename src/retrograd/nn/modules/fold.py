"""Unfold (im2col) and Fold (col2im)."""

from __future__ import annotations

from typing import Any

from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn.modules.module import Module

__all__ = ["Unfold", "Fold"]


class Fold(Module):
    """F.fold: sums columns of sliding blocks into an output of spatial size output_size."""

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.fold(input, self.output_size, self.kernel_size, self.dilation,
                                  self.padding, self.stride)

    def extra_repr(self) -> str:
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                "padding={padding}, stride={stride}".format(**self.__dict__))


class Unfold(Module):
    """F.unfold: the sliding blocks of the input as columns."""

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.unfold(input, self.kernel_size, self.dilation, self.padding,
                                    self.stride)

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))
