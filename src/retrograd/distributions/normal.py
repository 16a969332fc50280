"""Normal(loc, scale), reparameterized: rsample is loc + eps * scale."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import numpy as np

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions.distribution import Distribution


def _as_tensors(*values: Any) -> list:
    ref = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = ref.dtype if ref is not None else retrograd.get_default_dtype()
    out = [v if isinstance(v, Tensor) else retrograd.tensor(float(v), dtype=dtype)
           for v in values]
    shape = Size(np.broadcast_shapes(*(tuple(t.shape) for t in out)))
    return [t.expand(shape) for t in out]


class Normal(Distribution):
    arg_constraints = {"loc": None, "scale": None}
    has_rsample = True

    def __init__(self, loc: Tensor | Number, scale: Tensor | Number,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = _as_tensors(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = retrograd.randn(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        var = self.scale ** 2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
