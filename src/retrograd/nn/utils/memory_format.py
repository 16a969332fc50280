"""Converting the weights of 2-d / 3-d convolutions (anywhere in a module tree) to a memory
format, e.g. channels_last."""

from __future__ import annotations

from typing import Any, TypeVar

from retrograd.nn.modules.conv import (
    Conv2d,
    Conv3d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from retrograd.nn.modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

_M = TypeVar("_M", bound=Module)


def _convert(module: _M, memory_format: Any, kinds: tuple) -> _M:
    if isinstance(module, kinds):
        data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = data.resize_(data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """Lay out the weight of every Conv2d / ConvTranspose2d in `module` in memory_format."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """Lay out the weight of every Conv3d / ConvTranspose3d in `module` in memory_format."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
