"""Flatten and Unflatten: reshape a range of dims into one, and back."""

from __future__ import annotations

from typing import Any

from retrograd._tensor import Tensor
from retrograd.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims start_dim..end_dim (by default all but the batch dim)."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim `dim` into `unflattened_size`."""

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        _require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _require_tuple_int(value: Any) -> None:
    if not isinstance(value, (tuple, list)):
        raise TypeError("unflattened_size must be a tuple of ints, but found type "
                        f"{type(value).__name__}")
    for i, elem in enumerate(value):
        if not isinstance(elem, int):
            raise TypeError("unflattened_size must be tuple of ints, but found element of type "
                            f"{type(elem).__name__} at pos {i}")
