"""SyncBatchNorm: batch norm whose batch statistics are those of the whole batch across the
ranks of a process group (each rank holding its part of the batch).

Outside a distributed training step (no process group, a group of one, eval mode) it is
BatchNorm. In a training step each rank computes per channel its count, mean and sum of
squared deviations, the ranks exchange them (one all_gather) and combine them exactly (Chan's
parallel formula, in float64), and every rank normalizes with the global mean and variance.
The backward needs two global sums per channel, of grad and of grad * x_hat (one all_reduce);
the weight and bias gradients stay local, as in torch (DDP averages them). torch runs this on
GPUs only and raises for CPU tensors; retrograd runs it on the CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import retrograd
from retrograd._tensor import Tensor
from retrograd.autograd.function import Function
from retrograd.nn.modules.module import Module
from retrograd.nn.modules.normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


def _channel_view(a: np.ndarray) -> np.ndarray:
    """(N, C, *) as (C, rest): the values of each channel in one row."""
    return np.moveaxis(a, 1, 0).reshape(a.shape[1], -1)


class _SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx: Any, input: Tensor, weight: Tensor | None, bias: Tensor | None,
                running_mean: Tensor | None, running_var: Tensor | None, eps: float,
                momentum: float, process_group: Any, world_size: int) -> Tensor:
        import retrograd.distributed as dist

        x = input._data
        rows = _channel_view(x).astype(np.float64)
        count = rows.shape[1]
        mean = rows.mean(axis=1) if count else np.zeros(rows.shape[0])
        m2 = ((rows - mean[:, None]) ** 2).sum(axis=1)
        local = retrograd.from_numpy(np.stack([np.full_like(mean, count), mean, m2]))
        gathered = [retrograd.empty_like(local) for _ in range(world_size)]
        dist.all_gather(gathered, local, group=process_group)
        counts, means, m2s = (np.stack([g._data[i] for g in gathered]) for i in range(3))
        total = counts.sum(axis=0)
        if (total <= 1).any():
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        g_mean = (counts * means).sum(axis=0) / total
        g_m2 = (m2s + counts * (means - g_mean) ** 2).sum(axis=0)
        var = g_m2 / total
        invstd = 1.0 / np.sqrt(var + eps)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        xhat = (x - g_mean.reshape(shape)) * invstd.reshape(shape)
        out = xhat
        if weight is not None:
            out = out * weight._data.reshape(shape)
        if bias is not None:
            out = out + bias._data.reshape(shape)
        if running_mean is not None and running_var is not None:
            unbiased = g_m2 / (total - 1)
            dt = running_mean._data.dtype
            np.copyto(running_mean._data, ((1 - momentum) * running_mean._data
                                           + momentum * g_mean).astype(dt))
            np.copyto(running_var._data, ((1 - momentum) * running_var._data
                                          + momentum * unbiased).astype(dt))
        ctx.xhat = xhat.astype(x.dtype)
        ctx.invstd, ctx.total = invstd, total
        ctx.group, ctx.has_weight, ctx.has_bias = process_group, weight is not None, \
            bias is not None
        ctx.weight = None if weight is None else weight._data
        return retrograd.from_numpy(np.ascontiguousarray(out.astype(x.dtype)))

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        import retrograd.distributed as dist

        g = grad_output._data
        xhat = ctx.xhat
        shape = (1, -1) + (1,) * (g.ndim - 2)
        sum_dy = _channel_view(g).astype(np.float64).sum(axis=1)
        sum_dy_xhat = _channel_view(g * xhat).astype(np.float64).sum(axis=1)
        sums = retrograd.from_numpy(np.stack([sum_dy, sum_dy_xhat]))
        dist.all_reduce(sums, group=ctx.group)
        mean_dy = sums._data[0] / ctx.total
        mean_dy_xhat = sums._data[1] / ctx.total
        scale = ctx.invstd if ctx.weight is None else ctx.invstd * ctx.weight
        grad_input = ((g - mean_dy.reshape(shape) - xhat * mean_dy_xhat.reshape(shape))
                      * scale.reshape(shape)).astype(g.dtype)
        dt = g.dtype
        grad_weight = retrograd.from_numpy(sum_dy_xhat.astype(dt)) if ctx.has_weight else None
        grad_bias = retrograd.from_numpy(sum_dy.astype(dt)) if ctx.has_bias else None
        return (retrograd.from_numpy(np.ascontiguousarray(grad_input)), grad_weight, grad_bias,
                None, None, None, None, None, None)


class SyncBatchNorm(_BatchNorm):
    """torch.nn.SyncBatchNorm: BatchNorm over the whole batch of a process group."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Tensor) -> Tensor:
        import retrograd.distributed as dist

        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        world_size = dist.get_world_size(self.process_group) \
            if self.training and dist.is_initialized() else 1
        if world_size <= 1:
            return super().forward(input)
        factor = self._count_batch()  # (training: world_size > 1 only then)
        track = self.track_running_stats
        return _SyncBatchNormFunction.apply(
            input, self.weight, self.bias, self.running_mean if track else None,
            self.running_var if track else None, self.eps, factor, self.process_group,
            world_size)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """Replace every BatchNorm*D in `module` (itself included) by a SyncBatchNorm sharing
        its parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                with retrograd.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out
