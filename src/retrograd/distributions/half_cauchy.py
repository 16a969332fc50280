"""HalfCauchy(scale): |X| for X ~ Cauchy(0, scale)."""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.distributions.cauchy import Cauchy
from retrograd.distributions.folded import Folded
from retrograd.distributions.transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(Folded):
    base_dist: Cauchy

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return retrograd.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def _value(self, value: Any) -> Any:
        return retrograd.as_tensor(value, dtype=self.base_dist.scale.dtype)
