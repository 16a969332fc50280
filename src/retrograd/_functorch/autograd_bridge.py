"""Entering and leaving a vmap level as differentiable functions, so that grad(vmap(f)) and
vjp(vmap(f)) differentiate through the batched computation (NOTE [Batched tensors])."""

from __future__ import annotations

from typing import Any

from retrograd.autograd.function import Function


class AddBatchDim(Function):
    @staticmethod
    def forward(ctx: Any, x: Any, in_dim: int, level: int) -> Any:
        from retrograd._functorch.batched import BatchedTensor

        ctx.in_dim, ctx.level = in_dim, level
        ctx.batch_size = x.shape[in_dim]
        value = x if in_dim == 0 else x.movedim(in_dim, 0)
        return BatchedTensor(value, level)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        from retrograd._functorch.levels import remove_batch_dim

        return remove_batch_dim(grad, ctx.level, ctx.batch_size, ctx.in_dim), None, None


class RemoveBatchDim(Function):
    @staticmethod
    def forward(ctx: Any, y: Any, out_dim: int) -> Any:
        ctx.out_dim, ctx.level = out_dim, y._level
        v = y._value
        return v.view(v.shape) if out_dim == 0 else v.movedim(0, out_dim)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        from retrograd._functorch.batched import BatchedTensor

        value = grad if ctx.out_dim == 0 else grad.movedim(ctx.out_dim, 0)
        return BatchedTensor(value, ctx.level), None
