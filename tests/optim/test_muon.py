"""optim.Muon against torch: steps (float32, equal to rounding), options, state and
state_dict, argument errors; and the half-precision addmm it relies on (one rounding, as
torch's kernel)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

RS = np.random.RandomState(0)
W = [RS.randn(6, 4).astype(np.float32), RS.randn(3, 8).astype(np.float32),
     RS.randn(5, 5).astype(np.float32)]


def _run(lib, steps: int = 4, **kw):
    ws = [lib.tensor(w.copy(), requires_grad=True) for w in W]
    opt = lib.optim.Muon(ws, lr=0.02, **kw)
    for step in range(steps):
        rng = np.random.RandomState(step)
        for i, w in enumerate(ws):
            if not (step == 1 and i == 2):  # a parameter without a gradient this step
                w.grad = lib.tensor(rng.randn(*w.shape).astype(np.float32))
            else:
                w.grad = None
        opt.step()
    return [w.detach().numpy() for w in ws], opt


@pytest.mark.parametrize("kw", [{}, {"nesterov": False}, {"momentum": 0.0},
                                {"adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.0},
                                {"adjust_lr_fn": "original", "ns_steps": 3, "eps": 1e-5},
                                {"ns_coefficients": (2.0, -1.5, 0.5), "weight_decay": 0.3}])
def test_steps_match_torch(kw):
    ours, opt = _run(retrograd, **kw)
    theirs, topt = _run(torch, **kw)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for k in tsd["state"]:
        assert list(sd["state"][k]) == list(tsd["state"][k]) == ["momentum_buffer"]
        np.testing.assert_allclose(sd["state"][k]["momentum_buffer"].numpy(),
                                   tsd["state"][k]["momentum_buffer"].numpy(), rtol=1e-6,
                                   atol=1e-8)


def test_state_dict_round_trip_keeps_stepping():
    ours, opt = _run(retrograd, steps=3)
    ws = [retrograd.tensor(w, requires_grad=True) for w in ours]
    again = retrograd.optim.Muon(ws, lr=0.02)
    again.load_state_dict(opt.state_dict())
    for w, p in zip(ws, opt.param_groups[0]["params"]):
        w.grad = p.grad.clone()
        again.step()
    assert all(np.isfinite(w.detach().numpy()).all() for w in ws)
    assert repr(again).splitlines()[0] == "Muon ("


def _error(lib, make):
    with pytest.raises(Exception) as e:
        make(lib)
    # (a Size prints with its library's name)
    return type(e.value).__name__, str(e.value).replace("retrograd.Size", "torch.Size")


@pytest.mark.parametrize("make", [
    lambda lib: lib.optim.Muon([lib.zeros(3, requires_grad=True)]),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], lr=-1.0),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], momentum=-0.1),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], weight_decay=-0.1),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], adjust_lr_fn="x"),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], lr=lib.ones(2)),
])
def test_argument_errors_as_torch(make):
    assert _error(retrograd, make) == _error(torch, make)


def test_too_many_newton_schulz_steps_as_torch():
    def make(lib):
        w = lib.zeros(2, 2, requires_grad=True)
        w.grad = lib.ones(2, 2)
        lib.optim.Muon([w], ns_steps=100).step()
    assert _error(retrograd, make) == _error(torch, make)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_addmm_rounds_once(dtype):
    x = np.random.RandomState(1).randn(5, 4).astype(np.float32)
    results = []
    for lib in (retrograd, torch):
        t = lib.tensor(x).to(getattr(lib, dtype))
        g = t @ t.T
        r = lib.addmm(g, g, g, beta=-4.775, alpha=2.0315)
        assert str(r.dtype).split(".")[-1] == dtype
        results.append(r.float().numpy())
    np.testing.assert_array_equal(results[0], results[1])
