"""Padding layers: constant (and zero), reflection, replication and circular, in 1, 2 and 3 dims.

Each stores `padding` as a tuple of 2 * dims ints (left, right, top, bottom, front, back) and
calls F.pad with its mode.
"""

from __future__ import annotations

from typing import Any

from retrograd._tensor import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = [
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


def _expand(padding: Any, dims: int) -> tuple:
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    return tuple(padding)


class _PadNd(Module):
    __constants__ = ["padding"]
    mode = "constant"
    dims = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _expand(padding, self.dims)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _layer(name: str, base: type, dims: int, mode: str) -> type:
    return type(name, (base,), {"dims": dims, "mode": mode, "__module__": __name__,
                                "__doc__": f"Pads the last {dims} dim(s) ({mode})."})


ConstantPad1d = _layer("ConstantPad1d", _ConstantPadNd, 1, "constant")
ConstantPad2d = _layer("ConstantPad2d", _ConstantPadNd, 2, "constant")
ConstantPad3d = _layer("ConstantPad3d", _ConstantPadNd, 3, "constant")
ZeroPad1d = _layer("ZeroPad1d", _ZeroPadNd, 1, "constant")
ZeroPad2d = _layer("ZeroPad2d", _ZeroPadNd, 2, "constant")
ZeroPad3d = _layer("ZeroPad3d", _ZeroPadNd, 3, "constant")
ReflectionPad1d = _layer("ReflectionPad1d", _PadNd, 1, "reflect")
ReflectionPad2d = _layer("ReflectionPad2d", _PadNd, 2, "reflect")
ReflectionPad3d = _layer("ReflectionPad3d", _PadNd, 3, "reflect")
ReplicationPad1d = _layer("ReplicationPad1d", _PadNd, 1, "replicate")
ReplicationPad2d = _layer("ReplicationPad2d", _PadNd, 2, "replicate")
ReplicationPad3d = _layer("ReplicationPad3d", _PadNd, 3, "replicate")
CircularPad1d = _layer("CircularPad1d", _PadNd, 1, "circular")
CircularPad2d = _layer("CircularPad2d", _PadNd, 2, "circular")
CircularPad3d = _layer("CircularPad3d", _PadNd, 3, "circular")
