"""StudentT(df, loc, scale): loc + scale * N / sqrt(Chi2(df) / df), reparameterized."""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import constraints
from retrograd.distributions.chi2 import Chi2
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Tensor | float, loc: Tensor | float = 0.0,
                 scale: Tensor | float = 1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        return self._expand_params(StudentT, batch_shape, _instance,
                                   ('df', 'loc', 'scale', '_chi2'))

    @property
    def mean(self) -> Tensor:
        # undefined (NaN) for df <= 1
        return self.loc.masked_fill(self.df <= 1, float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        # finite for df > 2, infinite for 1 < df <= 2, undefined for df <= 1
        big = self.df > 2
        safe_df = retrograd.where(big, self.df, retrograd.full_like(self.df, 3.0))
        var = self.scale.pow(2) * safe_df / (safe_df - 2)
        var = retrograd.where(big, var, self.df.masked_fill((self.df <= 2) & (self.df > 1),
                                                            math.inf))
        return var.masked_fill(self.df <= 1, float("nan"))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * retrograd.rsqrt(z / self.df))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                    + retrograd.lgamma(0.5 * self.df) - retrograd.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * retrograd.log1p(y ** 2.0 / self.df) - log_norm

    def entropy(self) -> Tensor:
        lbeta = (retrograd.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - retrograd.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (retrograd.digamma(0.5 * (self.df + 1))
                                         - retrograd.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
