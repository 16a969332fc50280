"""nn.CrossMapLRN2d: the legacy (Lua torch) cross-channel normalization, kept with its own
arithmetic so models that use it get torch's numbers.

It differs from LocalResponseNorm in two ways that torch preserves: the running window of
squares is started over the first (size - 1) // 2 + 1 channels and, for the channel at exactly
that offset, drops nothing (so its window holds one channel more), and the backward is the
legacy one, the gradient of the symmetric window, not of that forward. Both are reproduced."""

from __future__ import annotations

import numpy as np

from retrograd._tensor import Tensor, _wrap
from retrograd.autograd.function import Function, once_differentiable
from retrograd.nn.modules.channel_ops import _ChannelWindowNorm

__all__ = ["CrossMapLRN2d"]


def _scale(x: np.ndarray, size: int, alpha: float, k: float) -> np.ndarray:
    channels = x.shape[1]
    sq = x * x
    pre_pad = int((size - 1) / 2 + 1)
    scale = np.empty_like(x)
    scale[:, 0] = sq[:, :min(pre_pad, channels)].sum(1)
    for c in range(1, channels):
        scale[:, c] = scale[:, c - 1]
        if c < channels - pre_pad + 1:
            scale[:, c] += sq[:, c + pre_pad - 1]
        if c > pre_pad:
            scale[:, c] -= sq[:, c - pre_pad]
    return scale * (alpha / size) + k


class _CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input: Tensor, size: int, alpha: float, beta: float, k: float) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        x = input._data
        scale = _scale(x, size, alpha, k)
        out = _wrap(np.power(scale, -beta) * x)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.scale = scale
        ctx.save_for_backward(input, out)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output: Tensor) -> tuple:
        input, output = ctx.saved_tensors
        x, y, g, scale = input._data, output._data, grad_output._data, ctx.scale
        size, channels = ctx.size, x.shape[1]
        # the ratio g * y / scale, padded so a window of `size` channels slides over it
        before = int(size - (size - 1) / 2)
        if before + channels > channels + size - 1:  # size 1: torch's window does not fit
            raise RuntimeError(f"start ({before}) + length ({channels}) exceeds dimension "
                               f"size ({channels + size - 1}).")
        padded = np.zeros((x.shape[0], channels + size - 1) + x.shape[2:], x.dtype)
        padded[:, before:before + channels] = g * y / scale
        window = np.cumsum(padded, axis=1)
        sums = window[:, size - 1:size - 1 + channels] - np.concatenate(
            [np.zeros_like(window[:, :1]), window[:, :channels - 1]], axis=1)
        grad = np.power(scale, -ctx.beta) * g - (2 * ctx.alpha * ctx.beta / size) * x * sums
        return _wrap(grad.astype(x.dtype, copy=False)), None, None, None, None


class CrossMapLRN2d(_ChannelWindowNorm):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return _CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)
