"""nn.init against torch: gains, fan rules, the bounds/stds each initializer draws with, and
default layer initialization (statistically: values are random)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd
from tests.parity.harness import assert_same, both, error_of, torch_or_skip

pytest.importorskip("torch")


def test_calculate_gain_matches_torch():
    def prog(lib):
        g = lib.nn.init.calculate_gain
        names = ["linear", "conv1d", "conv2d", "conv_transpose2d", "sigmoid", "tanh", "relu",
                 "leaky_relu", "selu"]
        return ([float(g(n)) for n in names], g("leaky_relu", 0.2), g("leaky_relu", 3),
                error_of(g, "leaky_relu", True), error_of(g, "leaky_relu", "x"),
                error_of(g, "swish"))

    both(prog)


@pytest.mark.parametrize("shape", [(3, 5), (4, 2, 3), (6, 3, 2, 5), (2, 3, 1, 1, 4), (2, 0)])
def test_fan_in_and_fan_out_match_torch(shape):
    def prog(lib):
        return lib.nn.init._calculate_fan_in_and_fan_out(lib.empty(shape))

    both(prog)


def test_fan_errors_match_torch():
    def prog(lib):
        init = lib.nn.init
        return [error_of(init._calculate_fan_in_and_fan_out, lib.empty(3)),
                error_of(init.kaiming_uniform_, lib.empty(3, 3), mode="fan_avg"),
                error_of(init.xavier_normal_, lib.empty(4)),
                error_of(init.eye_, lib.empty(2, 2, 2)),
                error_of(init.orthogonal_, lib.empty(3)),
                error_of(init.dirac_, lib.empty(2, 2))]

    both(prog)


def _recorder(lib):
    """A tensor class whose uniform_/normal_ record their arguments, for each library."""
    base = lib.nn.Parameter if lib is retrograd else lib.Tensor
    log = []

    class Rec(base):
        def uniform_(self, a=0.0, b=1.0, generator=None):
            log.append(("uniform_", float(a), float(b)))
            return super().uniform_(a, b, generator=generator)

        def normal_(self, mean=0.0, std=1.0, generator=None):
            log.append(("normal_", float(mean), float(std)))
            return super().normal_(mean, std, generator=generator)

    def make(*shape):
        if lib is retrograd:
            return Rec(lib.empty(shape), requires_grad=False)
        return lib.empty(shape).as_subclass(Rec)

    return make, log


CASES = [
    ("uniform_", (3, 4), {"a": -2.0, "b": 0.5}),
    ("normal_", (3, 4), {"mean": 1.0, "std": 0.3}),
    ("xavier_uniform_", (5, 3), {}),
    ("xavier_uniform_", (4, 2, 3, 3), {"gain": 2.0}),
    ("xavier_normal_", (6, 2, 5), {}),
    ("kaiming_uniform_", (7, 3), {}),
    ("kaiming_uniform_", (4, 3, 2, 2), {"a": math.sqrt(5)}),
    ("kaiming_uniform_", (4, 3, 2), {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", (8, 4), {"mode": "FAN_OUT", "nonlinearity": "tanh"}),
    ("kaiming_normal_", (8, 4, 3), {"a": 0.1, "nonlinearity": "leaky_relu"}),
    ("trunc_normal_", (50,), {"mean": 0.5, "std": 2.0, "a": -1.0, "b": 3.0}),
    ("trunc_normal_", (50,), {"a": 1.0, "b": 1.5}),
]


@pytest.mark.parametrize("name,shape,kwargs", CASES,
                         ids=[f"{c[0]}{len(c[1])}d" for c in CASES])
def test_initializer_draws_with_torchs_parameters(name, shape, kwargs):
    torch = torch_or_skip()
    results = []
    for lib in (retrograd, torch):
        make, log = _recorder(lib)
        t = make(*shape)
        out = getattr(lib.nn.init, name)(t, **kwargs)
        # rejection samplers redraw a random number of times: compare the distinct draws,
        # leaving out the U(0, 1) acceptance draws (on torch's side they go through empty_like
        # of the recorder, on ours through a plain tensor)
        draws = sorted(set(log) - {("uniform_", 0.0, 1.0)})
        results.append((draws, out is t, tuple(out.shape)))
    assert_same(results[0], results[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mean,std,a,b", [(0.5, 2.0, -1.0, 3.0), (0.0, 1.0, 1.0, 1.5),
                                          (0.0, 1.0, -2.0, 2.0)])
def test_trunc_normal_stays_in_range_with_normal_shape(mean, std, a, b):
    torch = torch_or_skip()
    torch.manual_seed(0)
    retrograd.manual_seed(0)
    ours = retrograd.nn.init.trunc_normal_(retrograd.empty(20000), mean, std, a, b).numpy()
    theirs = torch.nn.init.trunc_normal_(torch.empty(20000), mean, std, a, b).numpy()
    assert ours.min() >= a and ours.max() <= b
    # same distribution: mean and std agree to sampling error
    assert abs(ours.mean() - theirs.mean()) < 0.05 * (b - a)
    assert abs(ours.std() - theirs.std()) < 0.05 * (b - a)


def test_deterministic_initializers_match_torch():
    def prog(lib):
        init = lib.nn.init
        p = lib.nn.Parameter(lib.empty(2, 3))
        return [init.constant_(lib.empty(2, 2), 0.25), init.ones_(lib.empty(3)),
                init.zeros_(p), p.requires_grad, init.eye_(lib.empty(2, 4)),
                init.eye_(lib.empty(3, 2)), init.dirac_(lib.empty(2, 2, 3)),
                init.dirac_(lib.empty(4, 2, 3, 3), groups=2)]

    both(prog)


@pytest.mark.parametrize("shape", [(4, 4), (3, 6), (6, 2, 2)])
def test_orthogonal_is_orthogonal(shape):
    t = retrograd.nn.init.orthogonal_(retrograd.empty(shape), gain=2.0)
    flat = t.numpy().reshape(shape[0], -1).astype(np.float64)
    rows, cols = flat.shape
    gram = flat @ flat.T if rows <= cols else flat.T @ flat
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(rows, cols)), atol=1e-5)


def test_zero_element_kaiming_warns_like_torch():
    def prog(lib):
        with pytest.warns(UserWarning) as rec:
            out = lib.nn.init.kaiming_uniform_(lib.empty(0, 3))
        return [str(w.message) for w in rec], tuple(out.shape)

    both(prog)


def _within(arr, bound):
    a = np.abs(np.asarray(arr))
    return bool(a.max() <= bound * (1 + 1e-6)) and bool(a.max() > 0.9 * bound)


def test_default_initialization_follows_torchs_rules():
    nn = retrograd.nn
    retrograd.manual_seed(0)
    lin = nn.Linear(400, 300)
    assert _within(lin.weight.detach().numpy(), 1 / math.sqrt(400))
    assert _within(lin.bias.detach().numpy(), 1 / math.sqrt(400))
    conv = nn.Conv2d(8, 60, 3, groups=2)  # fan_in = 8 / 2 * 3 * 3
    assert _within(conv.weight.detach().numpy(), 1 / math.sqrt(36))
    assert _within(conv.bias.detach().numpy(), 1 / math.sqrt(36))
    bil = nn.Bilinear(50, 7, 30)
    assert _within(bil.weight.detach().numpy(), 1 / math.sqrt(50))
    emb = nn.Embedding(500, 40).weight.detach().numpy()
    assert abs(emb.std() - 1.0) < 0.05 and abs(emb.mean()) < 0.05
    ln, bn, gn = nn.LayerNorm(5), nn.BatchNorm2d(5), nn.GroupNorm(1, 5)
    for m in (ln, bn, gn):
        assert np.all(m.weight.detach().numpy() == 1) and np.all(m.bias.detach().numpy() == 0)
    assert np.all(bn.running_var.numpy() == 1) and np.all(bn.running_mean.numpy() == 0)
    mha = nn.MultiheadAttention(64, 4)
    assert _within(mha.in_proj_weight.detach().numpy(), math.sqrt(6 / (64 + 192)))
    assert np.all(mha.in_proj_bias.detach().numpy() == 0)
    assert np.all(mha.out_proj.bias.detach().numpy() == 0)
    assert np.all(nn.PReLU(3).weight.detach().numpy() == 0.25)


def test_initialization_uses_retrograd_rng():
    retrograd.manual_seed(7)
    a = retrograd.nn.Linear(3, 3).weight.detach().numpy().copy()
    retrograd.manual_seed(7)
    b = retrograd.nn.Linear(3, 3).weight.detach().numpy()
    np.testing.assert_array_equal(a, b)
    g = retrograd.Generator().manual_seed(3)
    c = retrograd.nn.init.normal_(retrograd.empty(4), generator=g).numpy().copy()
    g.manual_seed(3)
    np.testing.assert_array_equal(c, retrograd.nn.init.normal_(retrograd.empty(4),
                                                               generator=g).numpy())
