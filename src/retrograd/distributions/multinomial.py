"""Multinomial(total_count, probs or logits): counts of total_count categorical draws."""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import constraints
from retrograd.distributions.binomial import Binomial
from retrograd.distributions.categorical import Categorical
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    def __init__(self, total_count: int = 1, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._categorical._new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        # the draw index goes last, then each draw adds one to its category's count
        order = list(range(1, draws.dim())) + [0]
        draws = draws.permute(*order)
        counts = retrograd.zeros(self._extended_shape(sample_shape), dtype=draws.dtype)
        counts.scatter_add_(-1, draws, retrograd.ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self) -> Tensor:
        n = retrograd.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - retrograd.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = retrograd.exp(self._binomial.log_prob(support))
        term2 = (binomial_probs * retrograd.lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = retrograd.lgamma(value.sum(-1) + 1)
        log_factorial_xs = retrograd.lgamma(value + 1).sum(-1)
        # a zero count of an impossible category contributes 0, not 0 * -inf
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
