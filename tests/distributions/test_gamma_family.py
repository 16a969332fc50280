"""Gamma, Chi2, Beta, Dirichlet, StudentT against torch (deterministic quantities and their
gradients, KL pairs), their sampling statistics, and the reparameterized gradient of rsample
(d E[x] / d concentration estimated from rsample against the closed form)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd import distributions as D
from tests.distributions.harness import check_parity, check_sampling, leaf
from tests.parity.harness import both, error_of

CONC = np.array([0.5, 1.0, 2.5])
RATE = np.array([1.5, 0.7, 2.0])
C0 = np.array([0.8, 2.0, 3.5])
POS = np.array([0.3, 1.0, 2.5])
UNIT = np.array([0.1, 0.5, 0.95])
DIR = np.array([[0.5, 1.0, 2.0], [3.0, 0.4, 0.9]])
SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])

CASES = {
    "gamma": (lambda lib, c, r: lib.distributions.Gamma(c, r), {"c": CONC, "r": RATE},
              [POS, np.array([-1.0, 1.0, 1.0])]),
    "gamma_numbers": (lambda lib: lib.distributions.Gamma(2.0, 3.0), {},
                      [np.array(0.5, dtype=np.float32)]),
    "chi2": (lambda lib, df: lib.distributions.Chi2(df), {"df": np.array([1.0, 3.0, 7.5])},
             [POS]),
    "beta": (lambda lib, a, b: lib.distributions.Beta(a, b), {"a": CONC, "b": C0},
             [UNIT, np.array([1.5, 0.5, 0.5])]),
    "beta_numbers": (lambda lib: lib.distributions.Beta(2.0, 0.5), {},
                     [np.array(0.25, dtype=np.float32)]),
    "dirichlet": (lambda lib, c: lib.distributions.Dirichlet(c), {"c": DIR},
                  [SIMPLEX, np.array([0.5, 0.6, -0.1])]),
    "dirichlet_small": (lambda lib, c: lib.distributions.Dirichlet(c),
                        {"c": np.array([[0.5, 0.4, 0.9], [2.0, 3.0, 1.5]])}, [SIMPLEX]),
    "studentt": (lambda lib, df, loc, s: lib.distributions.StudentT(df, loc, s),
                 {"df": np.array([0.8, 1.5, 4.0]), "loc": np.array([0.1, -0.5, 2.0]),
                  "s": RATE}, [np.array([0.3, -1.0, 2.0])]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity(name):
    make, params, values = CASES[name]
    check_parity(make, params, values)


def test_constructor_errors():
    def program(lib):
        d = lib.distributions
        t = lib.tensor
        return [error_of(d.Gamma, t([1.0, -1.0]), 1.0), error_of(d.Gamma, 1.0, 0.0),
                error_of(d.Chi2, t([0.0])), error_of(d.Beta, t([1.0]), t([-1.0])),
                error_of(d.Dirichlet, t(1.0)), error_of(d.Dirichlet, t([1.0, 0.0])),
                error_of(d.StudentT, t([-1.0])), error_of(d.StudentT, 1.0, 0.0, -1.0)]
    both(program)


def _pair(lib, a, b):
    def make(name, k):
        s = 0.4 * k
        c = leaf(lib, CONC + s)
        r = leaf(lib, RATE + s)
        if name == "gamma":
            return lib.distributions.Gamma(c, r), [c, r]
        if name == "beta":
            return lib.distributions.Beta(c, r), [c, r]
        if name == "dirichlet":
            x = leaf(lib, DIR + s)
            return lib.distributions.Dirichlet(x), [x]
        if name == "exponential":
            return lib.distributions.Exponential(r), [r]
        if name == "normal":
            return lib.distributions.Normal(c, r), [c, r]
        if name == "laplace":
            return lib.distributions.Laplace(c, r), [c, r]
        lo = leaf(lib, np.array([0.1, 0.2, -0.3]) + s / 10)
        return lib.distributions.Uniform(lo, lo + 0.5), [lo]
    p, lp = make(a, 0)
    q, lq = make(b, 1)
    out = error_of(lib.distributions.kl_divergence, p, q)
    if out[0] != "ok" or not out[1].requires_grad:
        return out
    grads = lib.autograd.grad(out[1][out[1].isfinite()].sum(), lp + lq, allow_unused=True)
    return out, [g if g is not None else "none" for g in grads]


KL_PAIRS = [("gamma", "gamma"), ("beta", "beta"), ("dirichlet", "dirichlet"),
            ("beta", "exponential"), ("beta", "gamma"), ("beta", "normal"), ("beta", "uniform"),
            ("exponential", "gamma"), ("exponential", "beta"), ("gamma", "exponential"),
            ("gamma", "normal"), ("gamma", "beta"), ("gamma", "uniform"), ("normal", "gamma"),
            ("normal", "beta"), ("laplace", "gamma"), ("laplace", "beta"),
            ("uniform", "beta"), ("uniform", "gamma")]


@pytest.mark.parametrize("a,b", KL_PAIRS)
def test_kl(a, b):
    both(_pair, a, b, rtol=1e-7, atol=1e-9)


def test_sampling():
    t = retrograd.tensor
    check_sampling(D.Gamma(t(CONC), t(RATE)), n=40000)
    check_sampling(D.Chi2(t([1.0, 3.0, 7.5])), n=40000)
    check_sampling(D.Beta(t(CONC), t(C0)), n=40000)
    check_sampling(D.Dirichlet(t(DIR)), n=40000)
    check_sampling(D.StudentT(t([5.0, 9.0]), t([0.5, -1.0]), t([1.0, 2.0])), n=40000)
    assert D.Gamma(2.0, 1.0).rsample((3,)).dtype == retrograd.float32


def test_gamma_rsample_gradient():
    # E[x] = c / r, so d mean(rsample) / dc is about 1 / r and / dr about -c / r^2
    n = 40000
    c = retrograd.tensor(CONC, requires_grad=True)
    r = retrograd.tensor(RATE, requires_grad=True)
    retrograd.manual_seed(0)
    x = D.Gamma(c, r).rsample((n,))
    assert x.grad_fn is not None
    x.sum(0).sum().div(n).backward()
    # the pathwise estimator's spread: dx/dc for x ~ Gamma(c, r) has std below ~1.2 / r here
    np.testing.assert_allclose(c.grad.numpy(), 1 / RATE, rtol=0.05)
    np.testing.assert_allclose(r.grad.numpy(), -CONC / RATE ** 2, rtol=0.05)


def test_dirichlet_beta_rsample_gradient():
    n = 40000
    a = retrograd.tensor(CONC, requires_grad=True)
    b = retrograd.tensor(C0, requires_grad=True)
    retrograd.manual_seed(1)
    x = D.Beta(a, b).rsample((n,))
    x.mean(0).sum().backward()
    # E[x] = a / (a + b): d/da = b / (a + b)^2, d/db = -a / (a + b)^2
    total = CONC + C0
    np.testing.assert_allclose(a.grad.numpy(), C0 / total ** 2, rtol=0.08)
    np.testing.assert_allclose(b.grad.numpy(), -CONC / total ** 2, rtol=0.08)
    c = retrograd.tensor(DIR[0], requires_grad=True)
    retrograd.manual_seed(2)
    D.Dirichlet(c).rsample((n,))[:, 0].mean().backward()
    s = DIR[0].sum()
    expected = -DIR[0, 0] / s ** 2 * np.ones(3)
    expected[0] += 1 / s
    np.testing.assert_allclose(c.grad.numpy(), expected, rtol=0.08, atol=0.01)


def test_studentt_rsample_gradient():
    loc = retrograd.tensor([0.5], dtype=retrograd.float64, requires_grad=True)
    scale = retrograd.tensor([2.0], dtype=retrograd.float64, requires_grad=True)
    d = D.StudentT(retrograd.tensor([6.0], dtype=retrograd.float64), loc, scale)
    retrograd.manual_seed(0)
    d.rsample((1000,)).mean().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [1.0])
    assert abs(float(scale.grad)) < 5 * np.sqrt(1.5) / np.sqrt(1000)
