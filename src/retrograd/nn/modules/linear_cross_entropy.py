"""nn.LinearCrossEntropyOptions and nn.LinearCrossEntropyLoss.

The options choose the chunked path of `F.linear_cross_entropy` (rows processed in chunks so
the full (N, C) logits never exist at once) and how it is sized: "auto" and `None` fields
resolve per call (`_adjust`) from the input's shape, dtype and device, as torch resolves them.
The loss module owns a `linear` submodule whose weight is stored flat (C * prod(out_features),
in_features) and reshaped to (C, *out_features, in_features) in forward.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal, NamedTuple

from retrograd._dtype import bfloat16, float16, float32, float64
from retrograd._dtype import dtype as _dtype_type
from retrograd._tensor import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.linear import Linear
from retrograd.nn.modules.loss import _WeightedLoss

__all__ = ["LinearCrossEntropyOptions", "LinearCrossEntropyLoss"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# What "auto" means per (device type, input dtype); torch's table. Only CPU exists here, but
# the CUDA rows are kept so `_adjust` with a cuda device resolves as torch's does.
_AUTO_DEFAULTS: dict[tuple[str, Any], _AutoDefault] = {
    ("cuda", bfloat16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cuda", float16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")

_ACC_DTYPES = (float16, bfloat16, float32, float64)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Configuration of the chunked `F.linear_cross_entropy` (`options=None` there selects
    the reference path: linear, then cross_entropy)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: _dtype_type | None = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        method = self.chunking_method
        if method is not None and method != "auto":
            name, sep, factor = method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, retrograd.float16, retrograd.bfloat16, "
                f"retrograd.float32, retrograd.float64}}, got {self.acc_dtype!r}. Pass "
                "acc_dtype=None to let the op pick automatically.")

    @staticmethod
    def _ceil_div(a: int, b: int) -> int:
        return _ceil_div(a, b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype: Any, device: Any) -> Any:
        """float32 for float16/bfloat16 input on CPU (which has a mixed-precision path);
        None (use the input's dtype) otherwise. No CUDA device exists here."""
        if device is None or dtype not in (float16, bfloat16):
            return None
        return float32 if device.type == "cpu" else None

    def _compute_batch_chunk_size(self, num_batches: int, in_features: int, num_classes: int,
                                  method: str | None = None) -> int:
        """Rows per chunk for "aspect_ratio[:N]": a (chunk, C) logits block about the size of
        the (N, in_features) input (divided by N), rounded up to a power of two."""
        method = str(method if method is not None else self.chunking_method)
        if not method.startswith("aspect_ratio"):
            raise AssertionError(f"unhandled chunking_method: {method!r}")
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        rows = _ceil_div(num_batches, _ceil_div(num_classes, in_features))
        power = 1 << (rows - 1).bit_length()
        return min(power // factor, num_batches)

    def _adjust(self, num_batches: int, in_features: int, num_classes: int, dtype: Any,
                device: Any = None) -> LinearCrossEntropyOptions:
        """These options with "auto" and None resolved for one call (device=None: the
        fallback pick)."""
        acc_policy: Any = self.acc_policy  # a Literal once resolved
        method = self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None  # an explicit size wins over the automatic one
        if acc_policy == "auto" or method == "auto":
            pick = (_AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK)
                    if device is not None else _AUTO_FALLBACK)
            if acc_policy == "auto":
                acc_policy = pick.acc_policy
            if method == "auto":
                method = pick.chunking_method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size,
                                                                     num_batches)
        if method is not None:
            size = self._compute_batch_chunk_size(num_batches, in_features, num_classes, method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method "
                    f"('{method}') give different chunk sizes ({self.batch_chunk_size} vs "
                    f"{size}); pass only one.")
        if self.acc_dtype is not None:
            acc_dtype = self.acc_dtype
        else:
            auto = (self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto"
                    else None)
            acc_dtype = auto if auto is not None else dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=method,
                                   batch_chunk_size=max(1, size), acc_dtype=acc_dtype)


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of `target` and the logits `linear(input)`; `linear` is a submodule."""

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index",
                     "label_smoothing"]
    num_classes: int
    out_features: tuple[int, ...]
    reduction: str
    ignore_index: int | None
    label_smoothing: float
    options: LinearCrossEntropyOptions | None

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (),
                 bias: bool = False, device: Any = None, dtype: Any = None,
                 reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # stored flat: Linear's weight is 2-D; forward gives it the (C, *out_features) shape
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        lin = self.linear
        linear_weight = lin.weight.reshape((self.num_classes, *self.out_features,
                                            lin.in_features))
        linear_bias = (lin.bias.reshape((self.num_classes, *self.out_features))
                       if lin.bias is not None else None)
        return F.linear_cross_entropy(
            input, linear_weight, target, linear_bias=linear_bias, weight=self.weight,
            reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
