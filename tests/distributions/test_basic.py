"""Normal, Bernoulli, Categorical against torch: every deterministic quantity, gradients,
expand, repr; sampling by shape, support and statistics."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.distributions import Bernoulli, Categorical, Normal
from tests.distributions.harness import check_parity, check_rsample_grad, check_sampling

RNG = np.random.default_rng(0)
LOC = RNG.normal(size=(3,))
SCALE = RNG.uniform(0.5, 2.0, size=(3,))
PROBS = np.array([0.1, 0.5, 0.9])
LOGITS = RNG.normal(size=(2, 4))
CPROBS = RNG.uniform(0.1, 1.0, size=(2, 4))

CASES = {
    "normal": (lambda lib, loc, scale: lib.distributions.Normal(loc, scale),
               {"loc": LOC, "scale": SCALE}, [np.array([0.3, -1.0, 2.0]), np.array(0.5),
                                              np.array([[0.1], [0.9]])]),
    "normal_scalar": (lambda lib, loc: lib.distributions.Normal(loc, 2.0),
                      {"loc": np.array(0.5)}, [np.array(0.25)]),
    "normal_numbers": (lambda lib: lib.distributions.Normal(1.0, 2.0), {},
                       [np.array(0.25, dtype=np.float32)]),
    "bernoulli_probs": (lambda lib, p: lib.distributions.Bernoulli(probs=p),
                        {"p": PROBS}, [np.array([0.0, 1.0, 1.0]), np.array(1.0)]),
    "bernoulli_logits": (lambda lib, lg: lib.distributions.Bernoulli(logits=lg),
                         {"lg": LOC}, [np.array([0.0, 1.0, 0.0])]),
    "bernoulli_number": (lambda lib: lib.distributions.Bernoulli(0.3), {},
                         [np.array(1.0, dtype=np.float32)]),
    "categorical_logits": (lambda lib, lg: lib.distributions.Categorical(logits=lg),
                           {"lg": LOGITS}, [np.array([0, 3]), np.array([[1], [2]])]),
    "categorical_probs": (lambda lib, p: lib.distributions.Categorical(probs=p),
                          {"p": CPROBS}, [np.array([2, 1])]),
    "categorical_1d": (lambda lib, p: lib.distributions.Categorical(probs=p),
                       {"p": np.array([0.2, 0.3, 0.5])}, [np.array(2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity(name):
    make, params, values = CASES[name]
    check_parity(make, params, values)


def test_normal_icdf_cdf_roundtrip_and_float32():
    def extra(lib, d):
        return {"icdf": d.icdf(lib.tensor([0.1, 0.5, 0.975], dtype=lib.float64)),
                "f32": lib.distributions.Normal(lib.zeros(2), lib.ones(2)).cdf(
                    lib.tensor([0.5, -1.0]))}
    check_parity(CASES["normal"][0], CASES["normal"][1], [], extra, rtol=1e-6)


def test_bernoulli_mode_and_support():
    def extra(lib, d):
        return {"mode": d.mode, "sup": d.enumerate_support(), "param_shape": d.param_shape}
    check_parity(lambda lib, p: lib.distributions.Bernoulli(p),
                 {"p": np.array([[0.2, 0.5], [0.7, 0.5]])}, [], extra)


def test_categorical_extra():
    def extra(lib, d):
        return {"param_shape": tuple(d.param_shape), "support": repr(d.support),
                "mode": d.mode, "zero_prob_entropy":
                lib.distributions.Categorical(lib.tensor([0.0, 0.5, 0.5])).entropy()}
    check_parity(CASES["categorical_logits"][0], CASES["categorical_logits"][1], [], extra)


def test_normal_sampling():
    loc = retrograd.tensor(LOC, requires_grad=True)
    scale = retrograd.tensor(SCALE, requires_grad=True)
    d = Normal(loc, scale)
    check_sampling(d)
    assert d.sample().dtype == retrograd.float64
    g_loc, g_scale = check_rsample_grad(d, [loc, scale])
    # d mean(loc + eps * scale) / d loc is 1/3 per element (the mean is over 3 columns too)
    np.testing.assert_allclose(g_loc.numpy(), np.full(3, 1 / 3))
    # ... and for scale the mean of the eps column / 3, about 0 (within 5 standard errors)
    assert np.all(np.abs(g_scale.numpy()) < 5 / np.sqrt(20000) / 3)


def test_bernoulli_categorical_sampling():
    check_sampling(Bernoulli(retrograd.tensor(PROBS)))
    check_sampling(Bernoulli(logits=retrograd.tensor(LOC)).expand((2, 3)))
    d = Categorical(retrograd.tensor(CPROBS))
    check_sampling(d, check_mean=False)
    retrograd.manual_seed(0)
    s = d.sample((20000,))
    assert s.dtype == retrograd.int64
    freq = np.stack([(s.numpy() == k).mean(0) for k in range(4)], -1)
    p = CPROBS / CPROBS.sum(-1, keepdims=True)
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / 20000))
    assert Categorical(retrograd.tensor(CPROBS)).sample().shape == (2,)
