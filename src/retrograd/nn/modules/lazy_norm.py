"""LazyBatchNorm1d/2d/3d and LazyInstanceNorm1d/2d/3d: num_features read from the first input.

Each is built as its norm with no features, no affine parameters and no running statistics,
then given UninitializedParameters (weight, bias when affine) and UninitializedBuffers
(running_mean, running_var when tracking, with a real num_batches_tracked). The first call
reads num_features from input.size(1), materializes and resets them as the norm does, and the
module becomes that norm (LazyModuleMixin). Unlike InstanceNorm, LazyInstanceNorm defaults to
affine=True and track_running_stats=True, as in torch.
"""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.nn.modules.lazy import LazyModuleMixin
from retrograd.nn.modules.normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _BatchNorm,
    _InstanceNorm,
)
from retrograd.nn.parameter import UninitializedBuffer, UninitializedParameter

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _LazyNormBase(LazyModuleMixin):
    num_features: int
    affine: bool
    track_running_stats: bool

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        # the norm without state: what it would create is replaced just below
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        me: Any = self
        me.affine = affine
        me.track_running_stats = track_running_stats
        if affine:
            me.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                me.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            me.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            me.running_var = UninitializedBuffer(device=device, dtype=dtype)
            me.num_batches_tracked = retrograd.tensor(0, dtype=retrograd.long, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        if not self.has_uninitialized_params():
            return
        me: Any = self
        self.num_features = input.shape[1]
        if self.affine:
            me.weight.materialize((self.num_features,))
            if me.bias is not None:
                me.bias.materialize((self.num_features,))
        if self.track_running_stats:
            me.running_mean.materialize((self.num_features,))
            me.running_var.materialize((self.num_features,))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):  # type: ignore[misc]
    """A BatchNorm1d whose num_features is inferred from input.size(1) on the first call."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):  # type: ignore[misc]
    """A BatchNorm2d whose num_features is inferred from input.size(1) on the first call."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):  # type: ignore[misc]
    """A BatchNorm3d whose num_features is inferred from input.size(1) on the first call."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):  # type: ignore[misc]
    """An InstanceNorm1d whose num_features is inferred from input.size(1) on the first call."""

    cls_to_become = InstanceNorm1d
    _no_batch_dim = InstanceNorm1d._no_batch_dim


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):  # type: ignore[misc]
    """An InstanceNorm2d whose num_features is inferred from input.size(1) on the first call."""

    cls_to_become = InstanceNorm2d
    _no_batch_dim = InstanceNorm2d._no_batch_dim


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):  # type: ignore[misc]
    """An InstanceNorm3d whose num_features is inferred from input.size(1) on the first call."""

    cls_to_become = InstanceNorm3d
    _no_batch_dim = InstanceNorm3d._no_batch_dim
