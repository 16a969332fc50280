"""Weibull(scale, concentration): scale * E^(1 / concentration) for E ~ Exponential(1)."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.distributions import constraints
from retrograd.distributions.exponential import Exponential
from retrograd.distributions.transformed_distribution import TransformedDistribution
from retrograd.distributions.transforms import AffineTransform, PowerTransform
from retrograd.distributions.utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(retrograd.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * retrograd.exp(retrograd.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        return (self.scale * ((self.concentration - 1) / self.concentration)
                ** self.concentration.reciprocal())

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (
            retrograd.exp(retrograd.lgamma(1 + 2 * self.concentration_reciprocal))
            - retrograd.exp(2 * retrograd.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self) -> Tensor:
        return (euler_constant * (1 - self.concentration_reciprocal)
                + retrograd.log(self.scale * self.concentration_reciprocal) + 1)
