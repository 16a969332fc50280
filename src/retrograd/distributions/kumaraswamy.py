"""Kumaraswamy(concentration1, concentration0): (1 - (1 - U)^(1/b))^(1/a) for U uniform."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.distributions import constraints
from retrograd.distributions.transformed_distribution import TransformedDistribution
from retrograd.distributions.transforms import AffineTransform, PowerTransform
from retrograd.distributions.uniform import Uniform
from retrograd.distributions.utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """E[X^n] = b B(1 + n / a, b)."""
    arg1 = 1 + n / a
    log_value = retrograd.lgamma(arg1) + retrograd.lgamma(b) - retrograd.lgamma(arg1 + b)
    return b * retrograd.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(retrograd.full_like(self.concentration0, 0),
                            retrograd.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        # no interior mode when either concentration is below 1
        undefined = (self.concentration0 < 1) | (self.concentration1 < 1)
        return log_mode.masked_fill(undefined, float("nan")).exp()

    @property
    def variance(self) -> Tensor:
        return (_moments(self.concentration1, self.concentration0, 2)
                - retrograd.pow(self.mean, 2))

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = retrograd.digamma(self.concentration0 + 1) + euler_constant
        return (t0 + t1 * h0 - retrograd.log(self.concentration1)
                - retrograd.log(self.concentration0))
