"""Samplers NumPy has and retrograd's op library does not (Poisson, binomial, standard gamma),
drawn from retrograd's generator through the ops layer's `draw` (so a compiled graph records
them as it records any other draw)."""

from __future__ import annotations

import numpy as np

import retrograd
from retrograd._ops.random import draw, gen
from retrograd._tensor import Tensor


def _poisson_kernel(rate: np.ndarray) -> np.ndarray:
    return gen(None).poisson(rate).astype(rate.dtype)


def _binomial_kernel(count: np.ndarray, probs: np.ndarray) -> np.ndarray:
    return gen(None).binomial(count.astype(np.int64), probs).astype(probs.dtype)


def _standard_gamma_kernel(alpha: np.ndarray) -> np.ndarray:
    out = gen(None).standard_gamma(alpha).astype(alpha.dtype)
    # a draw that underflows to 0 would leave the support; torch keeps the smallest normal
    return np.maximum(out, np.finfo(alpha.dtype).tiny)


def poisson(rate: Tensor) -> Tensor:
    """Poisson counts with the given rates (the rate's float dtype)."""
    return retrograd.from_numpy(np.asarray(draw(_poisson_kernel, rate.detach().contiguous())))


def binomial(count: Tensor, probs: Tensor) -> Tensor:
    """Successes in `count` trials of probability `probs` (the probs' float dtype)."""
    return retrograd.from_numpy(np.asarray(draw(
        _binomial_kernel, count.detach().contiguous(), probs.detach().contiguous())))


def standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) draws (no gradient; see gamma.py for the reparameterized one)."""
    return retrograd.from_numpy(np.asarray(draw(_standard_gamma_kernel,
                                                alpha.detach().contiguous())))
