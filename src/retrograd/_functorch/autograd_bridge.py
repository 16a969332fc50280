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

    @staticmethod
    def jvp(ctx: Any, tangent: Any, *_: Any) -> Any:
        from retrograd._functorch.batched import BatchedTensor

        value = tangent if ctx.in_dim == 0 else tangent.movedim(ctx.in_dim, 0)
        return BatchedTensor(value, ctx.level)


class RemoveBatchDim(Function):
    @staticmethod
    def forward(ctx: Any, y: Any, out_dim: int) -> Any:
        ctx.out_dim, ctx.level = out_dim, y._level
        v = y._value
        ctx.batch_size = v.shape[0]
        return v.view(v.shape) if out_dim == 0 else v.movedim(0, out_dim)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        from retrograd._functorch.levels import add_batch_dim

        # differentiable itself (double backward, forward over reverse)
        return add_batch_dim(grad, ctx.out_dim, ctx.level), None

    @staticmethod
    def jvp(ctx: Any, tangent: Any, *_: Any) -> Any:
        from retrograd._functorch.levels import remove_batch_dim

        return remove_batch_dim(tangent, ctx.level, ctx.batch_size, ctx.out_dim)


class Broadcast(Function):
    """x, unbatched at `level`, as a BatchedTensor of `size` copies; its gradient is the sum
    over the batch (every copy of x contributed)."""

    @staticmethod
    def forward(ctx: Any, x: Any, level: int, size: int) -> Any:
        from retrograd._functorch.batched import BatchedTensor

        ctx.level, ctx.size = level, size
        return BatchedTensor(x.unsqueeze(0).expand((size,) + tuple(x.shape)), level)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        from retrograd._functorch.batched import is_batched
        from retrograd._functorch.levels import remove_batch_dim

        if is_batched(grad, ctx.level):
            return remove_batch_dim(grad, ctx.level, ctx.size, 0).sum(0), None, None
        return grad * ctx.size, None, None

    @staticmethod
    def jvp(ctx: Any, tangent: Any, *_: Any) -> Any:
        from retrograd._functorch.batched import BatchedTensor, is_batched

        if is_batched(tangent, ctx.level):  # already one per example
            return tangent.view_as(tangent)
        return BatchedTensor(tangent.unsqueeze(0).expand((ctx.size,) + tuple(tangent.shape)),
                             ctx.level)
