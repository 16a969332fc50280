"""The distributions of |X| for X symmetric about 0 with a scale (HalfNormal, HalfCauchy): what
follows from folding, written once."""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.distributions import constraints
from retrograd.distributions.transformed_distribution import TransformedDistribution


class Folded(TransformedDistribution):
    """|X| for X = base_dist, symmetric about 0: the density doubles on [0, inf)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_dist: Any

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return retrograd.zeros_like(self.scale)

    def _value(self, value: Any) -> Any:
        """log_prob's argument as the base distribution reads it."""
        return value

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = self._value(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return retrograd.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
