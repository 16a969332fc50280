"""ExponentialFamily: distributions p(x) = h(x) exp(<t(x), theta> - F(theta)); the fallback
entropy is the Bregman divergence of the log normalizer F, with F's gradient from autograd."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = retrograd.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = log_norm - self._mean_carrier_measure
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
