"""LKJCholesky(dim, concentration): Cholesky factors of correlation matrices with density
proportional to det(L L^T)^(concentration - 1), sampled by the onion method (each row a
Beta-distributed squared length times a uniform direction)."""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import constraints
from retrograd.distributions.beta import Beta
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Tensor | float = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        # row i's squared off-diagonal length is Beta(i / 2, marginal - i / 2)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = retrograd.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = retrograd.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = retrograd.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
        # the first row has no off-diagonal part (its direction would be 0 / 0)
        first_row = retrograd.zeros(self.dim, 1, dtype=retrograd.bool)
        first_row[0] = True
        u_hypersphere = retrograd.where(
            first_row, 0.0, u_normal / u_normal.norm(dim=-1, keepdim=True))
        w = retrograd.sqrt(y) * u_hypersphere
        eps = retrograd.finfo(w.dtype).tiny
        diag = retrograd.clamp(1 - retrograd.sum(w ** 2, dim=-1), min=eps).sqrt()
        return w + retrograd.diag_embed(diag)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = retrograd.arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = retrograd.sum(order * diag.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = retrograd.lgamma(alpha) * dm1
        numerator = retrograd.mvlgamma(alpha - 0.5, dm1)
        normalize = 0.5 * dm1 * math.log(math.pi) + numerator - denominator
        return unnormalized - normalize
