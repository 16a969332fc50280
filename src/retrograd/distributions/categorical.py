"""Categorical: a distribution over the last dim's indices, from probs or logits."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions.distribution import (
    Distribution,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)


class Categorical(Distribution):
    arg_constraints = {"probs": None, "logits": None}

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            assert logits is not None  # exactly one of the two was given
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        param = self.probs if probs is not None else self.logits
        self._param = param
        self._num_events = param.size(-1)
        super().__init__(tuple(param.shape[:-1]), validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return retrograd.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = Size(sample_shape)
        with retrograd.no_grad():
            flat = self.probs.reshape(-1, self._num_events)
            drawn = retrograd.multinomial(flat, max(shape.numel(), 1), True).T
            return drawn.reshape(self._extended_shape(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        value = value.long().unsqueeze(-1)
        shape = [max(a, b) for a, b in zip(_left_pad(value.shape, self.logits.dim()),
                                           _left_pad(self.logits.shape, value.dim()))]
        log_pmf = self.logits.expand(shape)
        value = value.expand(shape[:-1] + [value.shape[-1]])[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=retrograd.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)


def _left_pad(shape: Any, ndim: int) -> list:
    shape = list(shape)
    return [1] * (ndim - len(shape)) + shape
