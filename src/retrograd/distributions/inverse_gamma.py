"""InverseGamma(concentration, rate): 1 / X for X ~ Gamma(concentration, rate)."""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.distributions import constraints
from retrograd.distributions.gamma import Gamma
from retrograd.distributions.transformed_distribution import TransformedDistribution
from retrograd.distributions.transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True
    base_dist: Gamma

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        result = self.rate / (self.concentration - 1)
        return retrograd.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return retrograd.where(self.concentration > 2, result, math.inf)

    def entropy(self) -> Tensor:
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())
