"""GradBucket: what a DDP communication hook receives (torch.distributed.GradBucket)."""

from __future__ import annotations

from typing import Any

from retrograd._tensor import Tensor


class GradBucket:
    """One bucket of gradients: a flat buffer holding the gradients of `parameters()` back to
    back, its index among the buckets, and whether it is the last bucket of the iteration."""

    def __init__(self, index: int, buffer: Tensor, parameters: list, views: list,
                 is_last: bool) -> None:
        self._index = index
        self._buffer = buffer
        self._parameters = parameters
        self._views = views
        self._is_last = is_last

    def index(self) -> int:
        return self._index

    def buffer(self) -> Tensor:
        return self._buffer

    def gradients(self) -> list:
        return list(self._views)

    def parameters(self) -> list:
        return list(self._parameters)

    def is_last(self) -> bool:
        return self._is_last

    def set_buffer(self, buffer: Tensor) -> None:
        self._buffer.copy_(buffer)

    def __repr__(self) -> Any:
        return f"GradBucket(index={self._index}, numel={self._buffer.numel()})"
