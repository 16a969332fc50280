"""Bernoulli: 0/1 outcomes from probs or logits."""

from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

import retrograd
from retrograd._tensor import Tensor
from retrograd.distributions.distribution import (
    Distribution,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)


class Bernoulli(Distribution):
    arg_constraints = {"probs": None, "logits": None}

    def __init__(self, probs: Tensor | Number | None = None,
                 logits: Tensor | Number | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        param = probs if probs is not None else logits
        if not isinstance(param, Tensor):
            param = retrograd.tensor(float(param))  # type: ignore[arg-type]
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(tuple(param.shape), validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with retrograd.no_grad():
            return retrograd.bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        logits = self.logits
        shape = np.broadcast_shapes(tuple(logits.shape), tuple(value.shape))
        return -retrograd.nn.functional.binary_cross_entropy_with_logits(
            logits.expand(shape), value.expand(shape).to(logits.dtype), reduction="none")

    def entropy(self) -> Tensor:
        return retrograd.nn.functional.binary_cross_entropy_with_logits(
            self.logits, self.probs, reduction="none")
