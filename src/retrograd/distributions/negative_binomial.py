"""NegativeBinomial(total_count, probs or logits): successes before total_count failures;
sampled as a Gamma-Poisson mixture."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import _sampling, constraints
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.gamma import Gamma
from retrograd.distributions.utils import (
    expand_count_and_param,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    set_count_and_param,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    total_count: Tensor  # (set_count_and_param sets these)
    _param: Tensor

    def __init__(self, total_count: Tensor | float, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        set_count_and_param(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        expand_count_and_param(self, new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return self.total_count * retrograd.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / retrograd.sigmoid(-self.logits)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=retrograd.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with retrograd.no_grad():
            return _sampling.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = retrograd.nn.functional.logsigmoid
        log_unnormalized = (self.total_count * logsigmoid(-self.logits)
                            + value * logsigmoid(self.logits))
        log_normalization = (-retrograd.lgamma(self.total_count + value)
                             + retrograd.lgamma(1.0 + value)
                             + retrograd.lgamma(self.total_count))
        # total_count + value == 0 is the point mass at 0: log-normalizer 0 there
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
