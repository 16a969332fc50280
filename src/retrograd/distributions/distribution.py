"""The Distribution base: shapes, lazily derived parameters and torch's repr."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor


class lazy_property:
    """Computed on first access, then stored in the instance (so repr lists it, as torch's)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        with retrograd.enable_grad():
            value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    eps = retrograd.finfo(probs.dtype).eps
    clamped = probs.clamp(min=eps, max=1 - eps)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return logits.sigmoid() if is_binary else logits.softmax(-1)


class Distribution:
    """Base class: batch_shape and event_shape, sample via rsample where one exists."""

    has_rsample = False
    arg_constraints: dict = {}

    def __init__(self, batch_shape: Any = (), event_shape: Any = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with retrograd.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for name in names:
            v = self.__dict__[name]
            parts.append(f"{name}: {v if v.numel() == 1 else v.size()}")
        return f"{type(self).__name__}({', '.join(parts)})"
