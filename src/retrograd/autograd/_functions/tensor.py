"""Resize: the legacy autograd Function that reshapes a tensor (same number of elements)."""

from __future__ import annotations

import math

from retrograd._tensor import Tensor
from retrograd.autograd.function import Function

RESIZE_NUMEL = (
    "requested resize to {} ({} elements in total), but the given tensor has a size of {} ({} "
    "elements). autograd's resize can only change the shape of a given tensor, while preserving "
    "the number of elements. "
)


class Resize(Function):
    """Resize.apply(tensor, sizes): `tensor` with shape `sizes` (a view when it is contiguous,
    else a contiguous copy); its gradient is the incoming one in the input's shape."""

    @staticmethod
    def forward(ctx, tensor: Tensor, sizes) -> Tensor:
        ctx.sizes = sizes
        ctx.numel = math.prod(sizes)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(RESIZE_NUMEL.format(
                "x".join(map(str, sizes)), ctx.numel, "x".join(map(str, tensor.size())),
                tensor.numel()))
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output: Tensor):
        if grad_output.numel() != ctx.numel:
            raise AssertionError(f"Expected grad_output to have {ctx.numel} elements, but got "
                                 f"{grad_output.numel()}")
        return grad_output.contiguous().view(ctx.input_sizes), None
