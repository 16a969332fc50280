"""Uniform, Exponential, Laplace, Cauchy, LogNormal, Poisson, Geometric, Binomial,
OneHotCategorical and Independent against torch: deterministic quantities and their
gradients; sampling by shape, support and statistics; rsample's gradient path."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd import distributions as D
from tests.distributions.harness import check_parity, check_rsample_grad, check_sampling
from tests.parity.harness import both, error_of

RNG = np.random.default_rng(1)
LOC = RNG.normal(size=(3,))
SCALE = RNG.uniform(0.5, 2.0, size=(3,))
RATE = RNG.uniform(0.5, 3.0, size=(3,))
PROBS = np.array([0.2, 0.5, 0.9])
LOGITS = RNG.normal(size=(2, 3))
X = np.array([0.3, -1.0, 2.0])
POS = np.array([0.3, 1.0, 2.5])
UNIT = np.array([0.1, 0.5, 0.95])
COUNTS = np.array([0.0, 2.0, 5.0])

CASES = {
    "uniform": (lambda lib, lo, hi: lib.distributions.Uniform(lo, hi),
                {"lo": LOC, "hi": LOC + SCALE}, [LOC + 0.5 * SCALE, LOC + 2 * SCALE, UNIT]),
    "uniform_numbers": (lambda lib: lib.distributions.Uniform(-1.0, 2.0), {},
                        [np.array(0.5, dtype=np.float32)]),
    "exponential": (lambda lib, r: lib.distributions.Exponential(r), {"r": RATE},
                    [POS, UNIT, np.array([-1.0, 1.0, 1.0])]),
    "laplace": (lambda lib, loc, s: lib.distributions.Laplace(loc, s),
                {"loc": LOC, "s": SCALE}, [X, UNIT]),
    "cauchy": (lambda lib, loc, s: lib.distributions.Cauchy(loc, s),
               {"loc": LOC, "s": SCALE}, [X, UNIT]),
    "lognormal": (lambda lib, loc, s: lib.distributions.LogNormal(loc, s),
                  {"loc": LOC, "s": SCALE}, [POS, UNIT, X]),
    "poisson": (lambda lib, r: lib.distributions.Poisson(r), {"r": RATE},
                [COUNTS, np.array([0.5, 1.0, 1.0])]),
    "geometric_probs": (lambda lib, p: lib.distributions.Geometric(p), {"p": PROBS},
                        [COUNTS, np.array([1.5, 0.0, 0.0])]),
    "geometric_logits": (lambda lib, lg: lib.distributions.Geometric(logits=lg), {"lg": LOC},
                         [COUNTS]),
    "binomial_probs": (lambda lib, p: lib.distributions.Binomial(5, probs=p), {"p": PROBS},
                       [COUNTS, np.array([6.0, 1.0, 1.0])]),
    "binomial_logits": (lambda lib, n, lg: lib.distributions.Binomial(n, logits=lg),
                        {"n": np.array([5.0, 7.0, 7.0]), "lg": LOC}, [COUNTS]),
    "onehot": (lambda lib, lg: lib.distributions.OneHotCategorical(logits=lg),
               {"lg": LOGITS}, [np.eye(3)[[0, 2]], np.array([0.0, 1.0, 0.0]),
                                np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])]),
    "independent_normal": (
        lambda lib, loc, s: lib.distributions.Independent(
            lib.distributions.Normal(loc.reshape(1, 3), s.reshape(1, 3)).expand((2, 3)), 1),
        {"loc": LOC, "s": SCALE}, [np.stack([X, X + 1])]),
    "independent_bernoulli": (
        lambda lib, p: lib.distributions.Independent(lib.distributions.Bernoulli(p), 1),
        {"p": PROBS}, [np.array([1.0, 0.0, 1.0])]),
    "independent_zero": (
        lambda lib, p: lib.distributions.Independent(lib.distributions.Bernoulli(p), 0),
        {"p": PROBS}, [np.array([1.0, 0.0, 1.0])]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity(name):
    make, params, values = CASES[name]
    check_parity(make, params, values)


def test_constructor_errors():
    def program(lib):
        d = lib.distributions
        t = lib.tensor
        return [
            error_of(d.Uniform, t([0.0, 1.0]), t([1.0, 1.0])),
            error_of(d.Exponential, t([0.0])),
            error_of(d.Laplace, 0.0, -1.0),
            error_of(d.Cauchy, t([0.0]), t([0.0])),
            error_of(d.LogNormal, 0.0, -2.0),
            error_of(d.Poisson, t([-1.0])),
            error_of(d.Geometric, t([0.0, 0.5])),
            error_of(d.Geometric, t([1.5])),
            error_of(d.Geometric),
            error_of(d.Binomial, t([2.5]), t([0.5])),
            error_of(d.Binomial, 3, t([1.5])),
            error_of(d.OneHotCategorical, t([0.5, -0.5])),
            error_of(d.Independent, d.Normal(t([0.0]), 1.0), 2),
            error_of(lambda: d.Binomial(t([2.0, 3.0]), t([0.5, 0.5])).entropy()),
            error_of(lambda: d.Binomial(t([2.0, 3.0]), t([0.5, 0.5])).enumerate_support()),
            error_of(lambda: d.Independent(d.Bernoulli(t([0.5])), 1).enumerate_support()),
        ]
    both(program)


def _rsample_grad_case(make, names, n=40000):
    leaves = [retrograd.tensor(v, dtype=retrograd.float64, requires_grad=True) for v in names]
    d = make(*leaves)
    check_sampling(d, n=n)
    return d, leaves, check_rsample_grad(d, leaves, n=n)


def test_uniform_sampling_and_rsample_grad():
    _, _, (g_lo, g_hi) = _rsample_grad_case(D.Uniform, [LOC, LOC + SCALE])
    # mean(low + u (high - low)): d/dlow = (1 - mean u) / 3, d/dhigh = mean u / 3
    assert np.all(np.abs(g_lo.numpy() - 0.5 / 3) < 5 * (12 ** -0.5) / np.sqrt(40000) / 3)
    np.testing.assert_allclose(g_lo.numpy() + g_hi.numpy(), np.full(3, 1 / 3))


def test_exponential_laplace_lognormal_sampling():
    _, leaves, (g_rate,) = _rsample_grad_case(D.Exponential, [RATE])
    # d mean(e / rate) / d rate = -mean(e) / rate^2 / 3 with mean(e) near 1
    np.testing.assert_allclose(g_rate.numpy(), -1 / RATE ** 2 / 3, rtol=0.05)
    _, _, (g_loc, g_scale) = _rsample_grad_case(D.Laplace, [LOC, SCALE])
    np.testing.assert_allclose(g_loc.numpy(), np.full(3, 1 / 3))
    assert np.all(np.abs(g_scale.numpy()) < 5 * np.sqrt(2) / np.sqrt(40000) / 3)
    d, _, (g_loc, _) = _rsample_grad_case(D.LogNormal, [LOC * 0.3, SCALE * 0.3])
    # d mean(exp(loc + s eps)) / d loc is the sample mean itself / 3, near the true mean / 3
    np.testing.assert_allclose(g_loc.numpy(), d.mean.detach().numpy() / 3, rtol=0.05)


def test_cauchy_sampling():
    loc = retrograd.tensor(LOC, requires_grad=True)
    d = D.Cauchy(loc, retrograd.tensor(SCALE))
    check_sampling(d, check_mean=False)
    retrograd.manual_seed(0)
    s = d.sample((40000,)).numpy()
    # the median is loc; the fraction below it is 1/2 within 5 standard errors
    assert np.all(np.abs((s < LOC).mean(0) - 0.5) < 5 * 0.5 / np.sqrt(40000))
    assert d.rsample((3,)).grad_fn is not None


def test_discrete_sampling():
    check_sampling(D.Poisson(retrograd.tensor(RATE)))
    check_sampling(D.Poisson(retrograd.tensor([0.0, 40.0])))
    check_sampling(D.Geometric(retrograd.tensor(PROBS)))
    check_sampling(D.Binomial(retrograd.tensor([5.0, 10.0, 0.0]), retrograd.tensor(PROBS)))
    check_sampling(D.OneHotCategorical(logits=retrograd.tensor(LOGITS)))
    check_sampling(D.Independent(D.Bernoulli(retrograd.tensor(PROBS)), 1))
    s = D.Poisson(retrograd.tensor(RATE, dtype=retrograd.float32)).sample((2,))
    assert s.dtype == retrograd.float32
    assert not D.Poisson(retrograd.tensor(RATE)).has_rsample


def test_straight_through():
    logits = retrograd.tensor(LOGITS, requires_grad=True)
    d = D.OneHotCategoricalStraightThrough(logits=logits)
    retrograd.manual_seed(0)
    s = d.rsample((4,))
    assert bool(d.support.check(s.detach()).all())
    (s * retrograd.arange(3.0, dtype=retrograd.float64)).sum().backward()
    # the gradient is that of 4 * sum(probs * [0, 1, 2])
    probs = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
    w = np.arange(3.0)
    expected = 4 * probs * (w - (probs * w).sum(-1, keepdims=True))
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-10)
