"""Max unpooling layers: place pooled maxima back at their indices (1-, 2- and 3-d)."""

from __future__ import annotations

from typing import Any

from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn.modules.module import Module
from retrograd.nn.modules.utils import _pair, _single, _triple

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class _MaxUnpoolNd(Module):
    _expand = staticmethod(_single)
    _functional = "max_unpool1d"

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = self._expand(kernel_size)
        self.stride = self._expand(stride if stride is not None else kernel_size)
        self.padding = self._expand(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return getattr(nn.functional, self._functional)(input, indices, self.kernel_size,
                                                        self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    pass


class MaxUnpool2d(_MaxUnpoolNd):
    _expand = staticmethod(_pair)
    _functional = "max_unpool2d"


class MaxUnpool3d(_MaxUnpoolNd):
    _expand = staticmethod(_triple)
    _functional = "max_unpool3d"
