"""Binomial(total_count, probs or logits): successes in total_count independent trials."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import _sampling, constraints
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.utils import (
    expand_count_and_param,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    set_count_and_param,
)

__all__ = ["Binomial"]


def _clamp_by_zero(x: Tensor) -> Tensor:
    # max(x, 0) with gradient 1/2 at 0 (the mean of the two sides)
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    total_count: Tensor  # (set_count_and_param sets these)
    _param: Tensor

    def __init__(self, total_count: Tensor | int = 1, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        set_count_and_param(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = Size(batch_shape)
        expand_count_and_param(self, new, batch_shape)
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with retrograd.no_grad():
            return _sampling.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_choose = (retrograd.lgamma(n + 1) - retrograd.lgamma(value + 1)
                      - retrograd.lgamma(n - value + 1))
        # n * log(1 + exp(logits)), written to stay finite for large |logits|
        log_norm = n * _clamp_by_zero(logits) + n * retrograd.log1p(
            retrograd.exp(-retrograd.abs(logits)))
        return value * logits + log_choose - log_norm

    def entropy(self) -> Tensor:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(retrograd.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = retrograd.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
