"""Dirichlet(concentration): distributions on the simplex; rsample normalizes reparameterized
Gamma draws, so its gradient is the Gamma draws' implicit one carried through the sum."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import _sampling, constraints
from retrograd.distributions.exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        concentration = self.concentration.expand(shape)
        # torch's draws: gamma samples made in float64, normalized there, then rounded to the
        # concentration's dtype (NOTE [torch's random streams]); the gradient goes through the
        # gamma draws' implicit reparameterization
        g = _sampling.standard_gamma_rsample(concentration.double())
        x = (g / g.sum(-1, True)).to(concentration.dtype)
        # keep every coordinate strictly inside (0, 1), outside the graph: at least the
        # smallest normal number, at most the float just below 1
        finfo = retrograd.finfo(x.dtype)
        x.detach().clamp_(min=finfo.tiny, max=1 - finfo.eps / 2)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (retrograd.xlogy(self.concentration - 1.0, value).sum(-1)
                + retrograd.lgamma(self.concentration.sum(-1))
                - retrograd.lgamma(self.concentration).sum(-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        c1 = (self.concentration - 1).clamp(min=0.0)
        mode = c1 / c1.sum(-1, True)
        # all concentrations below 1: the mass piles on a vertex; torch picks argmax's
        all_small = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = retrograd.nn.functional.one_hot(mode.argmax(dim=-1), c1.shape[-1]).to(mode)
        return retrograd.where(all_small, vertex, mode)

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Tensor:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (retrograd.lgamma(self.concentration).sum(-1) - retrograd.lgamma(a0)
                - (k - a0) * retrograd.digamma(a0)
                - ((self.concentration - 1.0) * retrograd.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return x.lgamma().sum(-1) - retrograd.lgamma(x.sum(-1))
