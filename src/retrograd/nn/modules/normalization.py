"""Normalization layers: LayerNorm, GroupNorm, RMSNorm, BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d.

BatchNorm keeps running statistics in buffers (running_mean, running_var, num_batches_tracked);
F.batch_norm updates the first two in place in training mode.
"""

from __future__ import annotations

import numbers
from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn import init
from retrograd.nn.modules._elsewhere import elsewhere
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


def _affine_params(module: Module, shape: Any, affine: bool, bias: bool, device: Any,
                   dtype: Any) -> None:
    """Register weight and bias (or None placeholders, which state_dict skips)."""
    if affine:
        module.weight = Parameter(retrograd.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(retrograd.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module: Module) -> None:
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalizes over the trailing `normalized_shape` dims; affine weight ones, bias zeros."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_params(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.layer_norm(input, self.normalized_shape, self.weight, self.bias,
                                        self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalizes over groups of channels; per-channel affine."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_params(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """x / rms(x) over the trailing dims, times a weight of ones."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(retrograd.empty(self.normalized_shape, device=device,
                                                    dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return nn.functional.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _NormBase(Module):
    """Shared state of batch and instance norm: affine parameters and running statistics."""

    _version = 2  # version 2 added num_batches_tracked
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_params(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", retrograd.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", retrograd.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 retrograd.tensor(0, dtype=retrograd.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed: keep (or start) the count
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                                   else retrograd.tensor(0, dtype=retrograd.long))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def _count_batch(self) -> float:
        """Count a training batch and give the running statistics' averaging factor:
        momentum, or with momentum=None (a cumulative average) 1 / num_batches_tracked."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        return factor

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = self._count_batch()
        # batch statistics in training, and in eval when there are no running stats
        use_batch_stats = self.training or (self.running_mean is None and
                                            self.running_var is None)
        # running stats are passed only when they are to be updated or used
        pass_stats = not self.training or self.track_running_stats
        return nn.functional.batch_norm(input, self.running_mean if pass_stats else None,
                                        self.running_var if pass_stats else None, self.weight,
                                        self.bias, use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) input."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) input."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) input."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        n = self._no_batch_dim
        if input.dim() not in (n, n + 1):
            raise ValueError(f"expected {n}D or {n + 1}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return nn.functional.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var")
                    if prefix + n in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with "
                    "track_running_stats=False. If state_dict is a checkpoint saved before 0.4.0, "
                    f"this may be expected because {klass} does not track running stats by "
                    "default since 0.4.0. Please remove these keys from state_dict. If the "
                    f"running stats are actually needed, instead set track_running_stats=True in "
                    f"{klass} to enable them. See the documentation of {klass} for details.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.size(feature_dim)}.")
            _ws.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                     "can silence this warning by not passing in num_features, which is not "
                     "used because affine=False", stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    _no_batch_dim = 4

# torch's module path for these names, whose classes live in other files
_HOMES = {
    "LocalResponseNorm": "channel_ops", "CrossMapLRN2d": "cross_map_lrn"}
__getattr__ = elsewhere(__name__, _HOMES)
__all__ += [name for name in _HOMES if not name.startswith("_")]
