"""torch.poisson and torch.binomial: torch's counts, drawn from the default generator or
`generator=`. poisson's node is PoissonBackward0 (a zero gradient); binomial's derivative
is not implemented, as in torch."""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.kernels import torch_rejection as TR
from retrograd._ops.layout import not_implemented, type_name
from retrograd._ops.pointwise import _no_derivative, _not_implemented_node
from retrograd._ops.random import _plain_probabilities, _sampler, _zeros_of, gen
from retrograd._ops.registry import op, register

POISSON_RATE = "invalid Poisson rate, expected rate to be non-negative"


def _poisson(rates: np.ndarray, generator) -> np.ndarray:
    if D.from_numpy_dtype(rates.dtype).category != D._FLOAT:
        raise not_implemented("poisson_cpu", rates.dtype)
    if (rates < 0).any():
        raise RuntimeError(POISSON_RATE)
    return TR.poisson(gen(generator), rates)  # torch's draws (NOTE [torch's random streams])


def _binomial(count: np.ndarray, prob: np.ndarray, generator) -> np.ndarray:
    if D.from_numpy_dtype(count.dtype).category != D._FLOAT:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{type_name(count.dtype)}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {type_name(prob.dtype)} but expected "
                           f"{type_name(count.dtype)}")
    # torch's draws (NOTE [torch's random streams]); a probability outside [0, 1] draws as
    # its nearest bound (all or none of the trials)
    return TR.binomial(gen(generator), count, prob)


_poisson_op = op("poisson(Tensor self, Generator? generator=None) -> Tensor", _poisson,
                 node="PoissonBackward0",
                 grads={"self": lambda grad: _zeros_of(grad.shape, grad.dtype)},
                 function=False, method=False)
_binomial_op = _not_implemented_node(op(
    "binomial(Tensor count, Tensor prob, Generator? generator=None) -> Tensor", _binomial,
    grads={"count, prob": _no_derivative("binomial")}, function=False, method=False))


def poisson(input, generator=None):
    """Counts drawn from Poisson distributions with the rates in input."""
    return _poisson_op(input, generator)


def binomial(count, prob, generator=None):
    """Successes in `count` trials of probability `prob` (broadcast together)."""
    return _binomial_op(count, prob, generator)


register("poisson", _sampler(poisson, _plain_probabilities))
register("binomial", _sampler(binomial, _plain_probabilities))
