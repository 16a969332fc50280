"""MultivariateNormal (from scale_tril, covariance_matrix or precision_matrix, batched),
RelaxedBernoulli and RelaxedOneHotCategorical against torch; sampling statistics and
rsample's gradient path."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd import distributions as D
from tests.distributions.harness import check_parity, check_sampling, leaf
from tests.parity.harness import both, error_of

LOC = np.array([[0.5, -1.0, 2.0], [0.0, 0.3, -0.2]])
A = np.array([[1.2, 0.0, 0.0], [0.4, 0.9, 0.0], [-0.3, 0.2, 0.7]])
COV = A @ A.T
PREC = np.linalg.inv(COV)
X = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])

CASES = {
    "mvn_tril": (lambda lib, loc, L: lib.distributions.MultivariateNormal(loc, scale_tril=L),
                 {"loc": LOC, "L": A}, [X, X[0]]),
    "mvn_cov": (lambda lib, loc, C: lib.distributions.MultivariateNormal(
        loc, covariance_matrix=C), {"loc": LOC[0], "C": COV}, [X]),
    "mvn_prec": (lambda lib, loc, P: lib.distributions.MultivariateNormal(
        loc, precision_matrix=P), {"loc": LOC[0], "P": PREC}, [X[1]]),
    "mvn_batched_cov": (lambda lib, loc, C: lib.distributions.MultivariateNormal(
        loc, covariance_matrix=C), {"loc": LOC[0], "C": np.stack([COV, 2 * COV])}, [X]),
    "relaxed_bernoulli": (lambda lib, t, p: lib.distributions.RelaxedBernoulli(t, probs=p),
                          {"t": np.array(0.5), "p": np.array([0.2, 0.5, 0.9])},
                          [np.array([0.1, 0.5, 0.99])]),
    "relaxed_bernoulli_logits": (
        lambda lib, t, lg: lib.distributions.RelaxedBernoulli(t, logits=lg),
        {"t": np.array([0.3, 1.0, 2.0]), "lg": np.array([0.2, -1.5, 0.9])},
        [np.array([0.1, 0.5, 0.99])]),
    "relaxed_onehot": (
        lambda lib, t, lg: lib.distributions.RelaxedOneHotCategorical(t, logits=lg),
        {"t": np.array(0.7), "lg": LOC}, [np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity(name):
    make, params, values = CASES[name]
    check_parity(make, params, values)


def test_mvn_properties_and_errors():
    def program(lib):
        d = lib.distributions
        loc = leaf(lib, LOC[0])
        m = d.MultivariateNormal(loc, covariance_matrix=leaf(lib, COV))
        out = [m.scale_tril, m.precision_matrix, m.covariance_matrix, repr(m),
               repr(m.expand((2,))), m.expand((2,)).scale_tril]
        t = lib.tensor
        out += [error_of(d.MultivariateNormal, t(1.0), t([[1.0]])),
                error_of(d.MultivariateNormal, t([0.0]), t([[1.0]]), scale_tril=t([[1.0]])),
                error_of(d.MultivariateNormal, t([0.0])),
                error_of(d.MultivariateNormal, t([0.0]), t([1.0])),
                error_of(d.MultivariateNormal, t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]])),
                error_of(d.MultivariateNormal, t([0.0, 0.0]),
                         scale_tril=t([[1.0, 1.0], [0.0, 1.0]])),
                error_of(lambda: m.log_prob(t([1.0, 2.0], dtype=lib.float64))),
                error_of(d.kl_divergence, m, d.MultivariateNormal(t([0.0, 0.0]),
                                                                   t([[1.0, 0.0], [0.0, 1.0]])))]
        return out
    both(program, rtol=1e-7, atol=1e-9)


def test_mvn_kl():
    def program(lib):
        d = lib.distributions
        loc, L = leaf(lib, LOC), leaf(lib, A)
        loc2, C = leaf(lib, LOC[1] + 0.5), leaf(lib, np.stack([COV + np.eye(3), 2 * COV]))
        p = d.MultivariateNormal(loc, scale_tril=L)
        q = d.MultivariateNormal(loc2, covariance_matrix=C)
        kl = d.kl_divergence(p, q)
        return kl, lib.autograd.grad(kl.sum(), [loc, L, loc2, C])
    both(program, rtol=1e-7, atol=1e-9)


def test_mvn_sampling_and_rsample_grad():
    loc = retrograd.tensor(LOC[0], requires_grad=True)
    L = retrograd.tensor(A, requires_grad=True)
    d = D.MultivariateNormal(loc, scale_tril=L)
    check_sampling(d, n=40000)
    retrograd.manual_seed(0)
    s = d.sample((40000,)).numpy()
    np.testing.assert_allclose(np.cov(s.T), COV, atol=0.06)
    x = d.rsample((100,))
    assert x.grad_fn is not None
    x.mean(0).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), np.ones(3))
    assert L.grad is not None


def test_relaxed_sampling():
    t = retrograd.tensor
    p = t([0.2, 0.5, 0.9], requires_grad=True)
    d = D.RelaxedBernoulli(t(0.5), probs=p)
    check_sampling(d, check_mean=False)
    retrograd.manual_seed(0)
    x = d.rsample((40000,))
    # at temperature 0.5 the samples pile near 0 and 1; P(x > 1/2) is exactly probs
    frac = (x.detach().numpy() > 0.5).mean(0)
    assert np.all(np.abs(frac - p.detach().numpy()) < 5 * 0.5 / np.sqrt(40000))
    x.sum().backward()
    assert p.grad is not None and bool((p.grad > 0).all())
    lg = t(LOC, requires_grad=True)
    r = D.RelaxedOneHotCategorical(t(0.3), logits=lg)
    check_sampling(r, check_mean=False)
    retrograd.manual_seed(0)
    y = r.rsample((40000,))
    # the argmax of a Gumbel-softmax sample is distributed as the categorical itself
    counts = np.stack([(y.detach().numpy().argmax(-1) == k).mean(0) for k in range(3)], -1)
    probs = np.exp(LOC) / np.exp(LOC).sum(-1, keepdims=True)
    assert np.all(np.abs(counts - probs) < 5 * np.sqrt(probs * (1 - probs) / 40000))
    y[..., 0].sum().backward()
    assert lg.grad is not None


W = np.array([[0.5, -0.2], [0.1, 0.8], [-0.7, 0.3]])
DIAG = np.array([0.5, 1.0, 1.5])

LOWRANK = {
    "lowrank": (lambda lib, loc, w, d: lib.distributions.LowRankMultivariateNormal(loc, w, d),
                {"loc": LOC, "w": W, "d": DIAG}, [X, X[0]]),
    "lowrank_batched_w": (
        lambda lib, loc, w, d: lib.distributions.LowRankMultivariateNormal(loc, w, d),
        {"loc": LOC[0], "w": np.stack([W, 2 * W]), "d": DIAG}, [X]),
    "continuous_bernoulli": (lambda lib, p: lib.distributions.ContinuousBernoulli(p),
                             {"p": np.array([0.1, 0.4995, 0.5, 0.8])},
                             [np.array([0.2, 0.5, 0.9, 1.0]), np.array([0.0, 1.0, 0.5, 0.3])]),
    "continuous_bernoulli_logits": (
        lambda lib, lg: lib.distributions.ContinuousBernoulli(logits=lg),
        {"lg": np.array([-2.0, 0.0, 0.001, 3.0])}, [np.array([0.2, 0.5, 0.9, 1.0])]),
}


@pytest.mark.parametrize("name", sorted(LOWRANK))
def test_lowrank_and_continuous_bernoulli(name):
    make, params, values = LOWRANK[name]

    def extra(lib, d):
        names = ("scale_tril", "covariance_matrix", "precision_matrix")
        return {n: error_of(lambda n=n: getattr(d, n)) for n in names}
    check_parity(make, params, values, extra)


def test_lowrank_errors_and_sampling():
    def program(lib):
        d = lib.distributions
        t = lib.tensor
        return [error_of(d.LowRankMultivariateNormal, t(1.0), lib.ones(1, 1), lib.ones(1)),
                error_of(d.LowRankMultivariateNormal, lib.zeros(3), lib.ones(3), lib.ones(3)),
                error_of(d.LowRankMultivariateNormal, lib.zeros(3), lib.ones(2, 1), lib.ones(3)),
                error_of(d.LowRankMultivariateNormal, lib.zeros(3), lib.ones(3, 1), lib.ones(2)),
                error_of(d.LowRankMultivariateNormal, lib.zeros(2, 3), lib.ones(4, 3, 1),
                         lib.ones(3)),
                error_of(d.ContinuousBernoulli, t([1.5]), validate_args=True)]
    both(program)
    d = D.LowRankMultivariateNormal(retrograd.tensor(LOC[0]), retrograd.tensor(W),
                                    retrograd.tensor(DIAG))
    check_sampling(d, n=40000)
    retrograd.manual_seed(0)
    s = d.sample((40000,)).numpy()
    np.testing.assert_allclose(np.cov(s.T), W @ W.T + np.diag(DIAG), atol=0.06)
    check_sampling(D.ContinuousBernoulli(retrograd.tensor([0.1, 0.5, 0.8])), n=40000)
    p = retrograd.tensor([0.2, 0.7], requires_grad=True)
    assert D.ContinuousBernoulli(p).rsample((2,)).grad_fn is not None


def _kl_pair(lib, a, b):
    d = lib.distributions

    def make(name, k):
        s = 0.3 * k
        if name == "cb":
            p = leaf(lib, np.array([0.1, 0.4995, 0.8]) + s / 10)
            return d.ContinuousBernoulli(p), [p]
        x = leaf(lib, np.array([0.2, 0.5, 0.7]) + s)
        y = leaf(lib, np.array([1.5, 2.0, 3.0]) + s)
        if name == "uniform":
            return d.Uniform(x * 0.1, x * 0.1 + 0.5 + s), [x]
        made = {"exponential": lambda: d.Exponential(y), "laplace": lambda: d.Laplace(x, y),
                "normal": lambda: d.Normal(x, y), "gamma": lambda: d.Gamma(y, y),
                "gumbel": lambda: d.Gumbel(x, y), "pareto": lambda: d.Pareto(y, y),
                "beta": lambda: d.Beta(y, x + 1)}[name]()
        return made, [x, y]
    p, lp = make(a, 0)
    q, lq = make(b, 1)
    out = error_of(d.kl_divergence, p, q)
    if out[0] != "ok" or not out[1].requires_grad:
        return out
    grads = lib.autograd.grad(out[1][out[1].isfinite()].sum(), lp + lq, allow_unused=True)
    return out, [g if g is not None else "none" for g in grads]


CB_PAIRS = [("cb", "cb"), ("beta", "cb"), ("cb", "pareto"), ("cb", "exponential"),
            ("cb", "normal"), ("cb", "uniform"), ("uniform", "cb"), ("exponential", "cb"),
            ("laplace", "cb"), ("normal", "cb"), ("gamma", "cb"), ("gumbel", "cb"),
            ("pareto", "cb")]


@pytest.mark.parametrize("a,b", CB_PAIRS)
def test_continuous_bernoulli_kl(a, b):
    both(_kl_pair, a, b, rtol=1e-7, atol=1e-9)


def test_lowrank_kl():
    def program(lib):
        d = lib.distributions
        loc, w, diag = leaf(lib, LOC), leaf(lib, W), leaf(lib, DIAG)
        loc2, w2, diag2 = leaf(lib, LOC[1]), leaf(lib, np.stack([W, -W])), leaf(lib, DIAG + 1)
        L = leaf(lib, A)
        lr1 = d.LowRankMultivariateNormal(loc, w, diag)
        lr2 = d.LowRankMultivariateNormal(loc2, w2, diag2)
        mvn = d.MultivariateNormal(loc2, scale_tril=L)
        leaves = [loc, w, diag, loc2, w2, diag2, L]
        out = []
        for p, q in ((lr1, lr2), (mvn, lr1), (lr1, mvn)):
            kl = d.kl_divergence(p, q)
            grads = lib.autograd.grad(kl.sum(), leaves, allow_unused=True, retain_graph=True)
            out.append((kl, [g if g is not None else "none" for g in grads]))
        small = d.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), lib.ones(2))
        small_mvn = d.MultivariateNormal(lib.zeros(2), lib.eye(2))
        out += [error_of(d.kl_divergence, lr1, small), error_of(d.kl_divergence, small_mvn, lr1),
                error_of(d.kl_divergence, lr1, small_mvn)]
        return out
    both(program, rtol=1e-7, atol=1e-9)
