"""Gamma(concentration, rate), reparameterized: rsample's gradient in the concentration is
the implicit one (see _sampling.standard_gamma_rsample)."""

from __future__ import annotations

from numbers import Number
from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import _sampling, constraints
from retrograd.distributions.exp_family import ExponentialFamily
from retrograd.distributions.utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, Number) and isinstance(rate, Number):
            batch_shape = Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expand_params(Gamma, batch_shape, _instance, ('concentration', 'rate'))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = (_sampling.standard_gamma_rsample(self.concentration.expand(shape))
                 / self.rate.expand(shape))
        # keep draws that underflowed inside the support, outside the graph (as torch does)
        value.detach().clamp_(min=retrograd.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value: Tensor) -> Tensor:
        value = retrograd.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (retrograd.xlogy(self.concentration, self.rate)
                + retrograd.xlogy(self.concentration - 1, value)
                - self.rate * value - retrograd.lgamma(self.concentration))

    def entropy(self) -> Tensor:
        return (self.concentration - retrograd.log(self.rate)
                + retrograd.lgamma(self.concentration)
                + (1.0 - self.concentration) * retrograd.digamma(self.concentration))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        return retrograd.lgamma(x + 1) + (x + 1) * retrograd.log(-y.reciprocal())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return retrograd.igamma(self.concentration, self.rate * value)
