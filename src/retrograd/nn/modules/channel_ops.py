"""Layers acting across channels: local response normalization and channel shuffling."""

from __future__ import annotations

from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn.modules.module import Module

__all__ = ["LocalResponseNorm", "ChannelShuffle"]


class _ChannelWindowNorm(Module):
    """Normalization by the squares of a window of neighbouring channels: its settings."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float, beta: float, k: float) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LocalResponseNorm(_ChannelWindowNorm):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.local_response_norm(input, self.size, self.alpha, self.beta,
                                                 self.k)


class ChannelShuffle(Module):
    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
