"""ContinuousBernoulli(probs or logits): the density proportional to p^x (1 - p)^(1 - x) on
[0, 1]. Near p = 1/2 (inside `lims`) the closed forms lose precision, so Taylor expansions
around 1/2 take over there, as in torch."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import constraints
from retrograd.distributions.exp_family import ExponentialFamily
from retrograd.distributions.utils import (
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None,
                 lims: tuple = (0.499, 0.501), validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # torch checks here only when validate_args was passed explicitly
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self) -> Tensor:
        return retrograd.max(retrograd.le(self.probs, self._lims[0]),
                             retrograd.gt(self.probs, self._lims[1]))

    def _cut_probs(self) -> Tensor:
        # inside the unstable region the closed forms see lims[0] (their branch is unused)
        return retrograd.where(self._outside_unstable_region(), self.probs,
                               self._lims[0] * retrograd.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        cut = self._cut_probs()
        below = retrograd.where(retrograd.le(cut, 0.5), cut, retrograd.zeros_like(cut))
        above = retrograd.where(retrograd.ge(cut, 0.5), cut, retrograd.ones_like(cut))
        log_norm = retrograd.log(retrograd.abs(retrograd.log1p(-cut) - retrograd.log(cut))) \
            - retrograd.where(retrograd.le(cut, 0.5), retrograd.log1p(-2.0 * below),
                              retrograd.log(2.0 * above - 1.0))
        x = retrograd.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return retrograd.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (retrograd.log1p(-cut) - retrograd.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * retrograd.pow(x, 2)) * x
        return retrograd.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return retrograd.sqrt(self.variance)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        variances = (cut * (cut - 1.0) / retrograd.pow(1.0 - 2.0 * cut, 2)
                     + 1.0 / retrograd.pow(retrograd.log1p(-cut) - retrograd.log(cut), 2))
        x = retrograd.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return retrograd.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = retrograd.rand(shape, dtype=self.probs.dtype)
        with retrograd.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(retrograd.rand(shape, dtype=self.probs.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-retrograd.nn.functional.binary_cross_entropy_with_logits(
            logits, value, reduction="none") + self._cont_bern_log_norm())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = ((retrograd.pow(cut, value) * retrograd.pow(1.0 - cut, 1.0 - value) + cut - 1.0)
                / (2.0 * cut - 1.0))
        unbounded = retrograd.where(self._outside_unstable_region(), cdfs, value)
        return retrograd.where(
            retrograd.le(value, 0.0), retrograd.zeros_like(value),
            retrograd.where(retrograd.ge(value, 1.0), retrograd.ones_like(value), unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        return retrograd.where(
            self._outside_unstable_region(),
            (retrograd.log1p(-cut + value * (2.0 * cut - 1.0)) - retrograd.log1p(-cut))
            / (retrograd.log(cut) - retrograd.log1p(-cut)),
            value)

    def entropy(self) -> Tensor:
        log_probs0 = retrograd.log1p(-self.probs)
        log_probs1 = retrograd.log(self.probs)
        return (self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm()
                - log_probs0)

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        outside = retrograd.max(retrograd.le(x, self._lims[0] - 0.5),
                                retrograd.gt(x, self._lims[1] - 0.5))
        cut = retrograd.where(outside, x, (self._lims[0] - 0.5) * retrograd.ones_like(x))
        log_norm = (retrograd.log(retrograd.abs(retrograd.special.expm1(cut)))
                    - retrograd.log(retrograd.abs(cut)))
        taylor = 0.5 * x + retrograd.pow(x, 2) / 24.0 - retrograd.pow(x, 4) / 2880.0
        return retrograd.where(outside, log_norm, taylor)
