"""GeneralizedPareto(loc, scale, concentration): the peaks-over-threshold distribution; the
exponential case (concentration 0) is handled by its own branch everywhere."""

from __future__ import annotations

import math
from numbers import Number, Real
from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import constraints
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return self._expand_params(GeneralizedPareto, batch_shape, _instance,
                                   ('loc', 'scale', 'concentration'))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(retrograd.rand(shape, dtype=self.loc.dtype))

    def _safe_concentration(self) -> tuple:
        # concentration 0 (the exponential limit) takes the other branch; 1 keeps it finite
        eq_zero = retrograd.isclose(self.concentration, retrograd.tensor(0.0))
        safe = retrograd.where(eq_zero, retrograd.ones_like(self.concentration),
                               self.concentration)
        return eq_zero, safe

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + retrograd.ones_like(z)
        where_nonzero = retrograd.where(y == 0, y, y * retrograd.log1p(safe * z))
        log_scale = (math.log(self.scale) if isinstance(self.scale, Real)
                     else self.scale.log())
        return -log_scale - retrograd.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        return retrograd.where(eq_zero, -z, -retrograd.log1p(safe * z) / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        return retrograd.log1p(-retrograd.exp(self.log_survival_function(value)))

    def cdf(self, value: Tensor) -> Tensor:
        return retrograd.exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        conc = self.concentration
        eq_zero = retrograd.isclose(conc, retrograd.zeros_like(conc))
        safe = retrograd.where(eq_zero, retrograd.ones_like(conc), conc)
        logu = retrograd.log1p(-value)
        where_nonzero = self.loc + self.scale / safe * retrograd.expm1(-safe * logu)
        return retrograd.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = retrograd.where(valid, self.concentration, 0.5)
        return retrograd.where(valid, self.loc + self.scale / (1 - safe), float("nan"))

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = retrograd.where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return retrograd.where(valid, result, float("nan"))

    def entropy(self) -> Tensor:
        ans = retrograd.log(self.scale) + self.concentration + 1
        return retrograd.broadcast_to(ans, self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        upper = retrograd.where(self.concentration < 0,
                                lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
