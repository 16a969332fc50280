"""kl_divergence against torch for every registered pair present, with gradients; dispatch
errors and register_kl for a user subclass."""

from __future__ import annotations

import numpy as np
import pytest

from tests.distributions.harness import leaf
from tests.parity.harness import both, error_of


def _make(lib, name, k):
    """The k-th (0 or 1) distribution of family `name`, with leaf parameters."""
    d = lib.distributions
    shift = 0.3 * k
    loc = leaf(lib, np.array([0.1, -0.4, 0.7]) + shift)
    scale = leaf(lib, np.array([0.6, 1.0, 1.7]) + shift)
    probs = leaf(lib, np.array([0.2, 0.5, 0.8]) - 0.1 * k)
    if name == "normal":
        return d.Normal(loc, scale), [loc, scale]
    if name == "laplace":
        return d.Laplace(loc, scale), [loc, scale]
    if name == "cauchy":
        return d.Cauchy(loc, scale), [loc, scale]
    if name == "lognormal":
        return d.LogNormal(loc, scale), [loc, scale]
    if name == "uniform":
        lo = leaf(lib, np.array([0.1, -0.4, 0.7]) - shift)
        return d.Uniform(lo, lo + scale + 2 * shift), [lo, scale]
    if name == "exponential":
        return d.Exponential(scale), [scale]
    if name == "poisson":
        return d.Poisson(scale), [scale]
    if name == "bernoulli":
        return d.Bernoulli(probs), [probs]
    if name == "geometric":
        return d.Geometric(probs), [probs]
    if name == "binomial":
        return d.Binomial(lib.tensor([4.0, 4.0, 6.0]) - k, probs), [probs]
    if name == "categorical":
        lg = leaf(lib, np.linspace(-1, 1, 8).reshape(2, 4) * (1 - 2 * k) + 0.2 * k)
        return d.Categorical(logits=lg), [lg]
    if name == "onehot":
        p = leaf(lib, np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])[::1 - 2 * k].copy())
        return d.OneHotCategorical(p), [p]
    if name == "independent":
        base, leaves = _make(lib, "normal", k)
        return d.Independent(base, 1), leaves
    raise KeyError(name)


PAIRS = [("normal", "normal"), ("laplace", "laplace"), ("cauchy", "cauchy"),
         ("lognormal", "lognormal"), ("uniform", "uniform"), ("exponential", "exponential"),
         ("poisson", "poisson"), ("bernoulli", "bernoulli"), ("geometric", "geometric"),
         ("binomial", "binomial"), ("categorical", "categorical"), ("onehot", "onehot"),
         ("independent", "independent"), ("bernoulli", "poisson"), ("exponential", "uniform"),
         ("exponential", "normal"), ("laplace", "exponential"), ("laplace", "uniform"),
         ("laplace", "normal"), ("normal", "exponential"), ("normal", "uniform"),
         ("normal", "laplace"), ("poisson", "bernoulli"), ("poisson", "binomial"),
         ("uniform", "exponential"), ("uniform", "normal")]


def _kl(lib, a, b):
    p, lp = _make(lib, a, 0)
    q, lq = _make(lib, b, 1)
    out = error_of(lib.distributions.kl_divergence, p, q)
    if out[0] != "ok" or not out[1].requires_grad:
        return out
    grads = lib.autograd.grad(out[1][out[1].isfinite()].sum(), lp + lq, allow_unused=True)
    return out, [g if g is not None else "none" for g in grads]


@pytest.mark.parametrize("a,b", PAIRS)
def test_kl_pair(a, b):
    both(_kl, a, b, rtol=1e-7, atol=1e-9)


def test_kl_special_cases():
    def program(lib):
        d = lib.distributions
        t = lib.tensor
        return [
            d.kl_divergence(d.Bernoulli(t([0.0, 1.0, 0.5])), d.Bernoulli(t([0.5, 0.0, 1.0]))),
            d.kl_divergence(d.Categorical(t([0.0, 0.5, 0.5])), d.Categorical(t([0.5, 0.5, 0.0]))),
            d.kl_divergence(d.Uniform(t([0.0, 0.0]), t([1.0, 2.0])),
                            d.Uniform(t([0.0, 0.5]), t([2.0, 3.0]))),
            d.kl_divergence(d.Uniform(t([-1.0, 1.0]), t([1.0, 2.0])), d.Exponential(t([1.0]))),
            error_of(d.kl_divergence, d.Binomial(2, t([0.5])), d.Binomial(3, t([0.5]))),
            error_of(d.kl_divergence, d.Normal(0.0, 1.0), d.Cauchy(0.0, 1.0)),
            error_of(d.kl_divergence, d.Normal(0.0, 1.0), d.Poisson(1.0)),
            error_of(d.kl_divergence, d.Independent(d.Normal(t([0.0]), 1.0), 1),
                     d.Independent(d.Normal(t([0.0]), 1.0), 0)),
            error_of(d.kl_divergence,
                     d.TransformedDistribution(d.Normal(0.0, 1.0), d.transforms.ExpTransform()),
                     d.TransformedDistribution(d.Normal(0.0, 1.0),
                                               d.transforms.SigmoidTransform())),
        ]
    both(program)


def test_register_kl_for_subclass():
    def program(lib):
        d = lib.distributions

        class MyNormal(d.Normal):
            pass

        @d.register_kl(MyNormal, d.Normal)
        def _kl(p, q):
            return lib.zeros(p.batch_shape)

        out = [d.kl_divergence(MyNormal(0.0, 1.0), d.Normal(1.0, 1.0)),
               d.kl_divergence(d.Normal(0.0, 1.0), MyNormal(1.0, 1.0))]
        # undo the registration so other tests see torch's registry unchanged
        from importlib import import_module
        kl = import_module(d.__name__ + ".kl")
        del kl._KL_REGISTRY[MyNormal, d.Normal]
        kl._KL_MEMOIZE.clear()
        return out
    both(program)
