"""The distributions' Poisson, binomial and standard gamma draws: torch's (NOTE [torch's random
streams]), through the ops layer's `draw` (so a compiled graph records them as it records any
other draw)."""

from __future__ import annotations

from typing import Any

import numpy as np

import retrograd
from retrograd._ops.kernels import torch_rejection as TR
from retrograd._ops.random import draw, gen
from retrograd._tensor import Tensor


def _poisson_kernel(rate: np.ndarray) -> np.ndarray:
    return TR.poisson(gen(None), rate)


def _binomial_kernel(count: np.ndarray, probs: np.ndarray) -> np.ndarray:
    return TR.binomial(gen(None), count, probs.astype(count.dtype, copy=False))


def _standard_gamma_kernel(alpha: np.ndarray) -> np.ndarray:
    # a draw that underflows to 0 would leave the support: torch keeps the smallest normal
    return TR.standard_gamma(gen(None), alpha)


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


def _gamma_sample_grad(x: Tensor, alpha: Tensor) -> Tensor:
    """dx/dalpha for x ~ Gamma(alpha, 1), by implicit differentiation of the CDF:
    dx/da = -(dP(a, x)/da) / p(x; a), with P the regularized lower incomplete gamma.

    dP/da comes from P's series P(a, x) = sum_n x^(a+n) e^-x / Gamma(a+n+1), differentiated
    term by term: each term gains the factor log(x) - digamma(a+n+1)."""
    shape = tuple(x.shape)
    xs = x.reshape(-1).double().clamp(min=1e-300)
    a = alpha.reshape(-1).double()
    out = retrograd.empty_like(xs)
    largest = float(xs.max()) if xs.numel() else 0.0
    # the terms peak near n = x - a and fall off within a few sqrt(x) after
    n_terms = int(min(largest + 8.0 * largest ** 0.5 + 40, 20000))
    chunk = max(1, 4_000_000 // n_terms)
    n = retrograd.arange(n_terms, dtype=retrograd.float64)
    for start in range(0, xs.numel(), chunk):
        xc, ac = xs[start:start + chunk, None], a[start:start + chunk, None]
        log_x = xc.log()
        shifted = ac + n + 1
        log_terms = (ac + n) * log_x - xc - retrograd.lgamma(shifted)
        d_p = (log_terms.exp() * (log_x - retrograd.digamma(shifted))).sum(-1)
        log_density = (ac[:, 0] - 1) * log_x[:, 0] - xc[:, 0] - retrograd.lgamma(ac[:, 0])
        out[start:start + chunk] = -d_p / log_density.exp()
    return out.reshape(shape).to(x.dtype)


class _StandardGamma(retrograd.autograd.Function):
    """Gamma(alpha, 1) draws whose gradient in alpha is the implicit reparameterization one
    (the role torch's _standard_gamma and its _standard_gamma_grad play)."""

    @staticmethod
    def forward(ctx: Any, alpha: Tensor) -> Tensor:
        x = standard_gamma(alpha)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> Tensor:
        x, alpha = ctx.saved_tensors
        with retrograd.no_grad():
            return grad_output * _gamma_sample_grad(x, alpha)


def standard_gamma_rsample(alpha: Tensor) -> Tensor:
    return _StandardGamma.apply(alpha)
