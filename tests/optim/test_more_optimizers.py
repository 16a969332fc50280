"""Adadelta, Adamax, NAdam, RAdam and LBFGS against torch.optim: trajectories, optimizer state,
state_dict round trips, argument errors."""

import io

import numpy as np
import pytest

import retrograd
import retrograd.optim as optim
from retrograd.serialization import load, save
from tests.optim.test_optimizers import STEPS, _np, _problem, _train, _trajectory

torch = pytest.importorskip("torch")

CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "momentum_decay": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.05, "betas": (0.8, 0.99), "maximize": True}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.9)}),  # rectified from the 6th step on
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.9), "weight_decay": 0.1,
               "decoupled_weight_decay": True, "maximize": True}),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in CASES]


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_trajectory_float32_matches_torch(name, kwargs):
    ours = _trajectory(retrograd, name, kwargs)
    ref = _trajectory(torch, name, kwargs)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_trajectory_float64_follows_torch_algorithm(name, kwargs):
    ours = _trajectory(retrograd, name, kwargs, "float64")
    ref = _trajectory(torch, name, kwargs, "float64")
    np.testing.assert_allclose(ours, ref, rtol=1e-11, atol=1e-13)


def _run(lib, name, kwargs, dtype, steps):
    params, loss_fn = _problem(lib, dtype)
    opt = getattr(lib.optim, name)(params, **kwargs)
    _train(lib, opt, params, loss_fn, steps)
    return opt


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_state_matches_torch(name, kwargs):
    ours = _run(retrograd, name, kwargs, "float64", 7).state_dict()
    ref = _run(torch, name, kwargs, "float64", 7).state_dict()
    assert ours["param_groups"] == ref["param_groups"]
    assert ours["state"].keys() == ref["state"].keys() == {0, 1}
    for i in ours["state"]:
        assert list(ours["state"][i]) == list(ref["state"][i])
        for key, v in ours["state"][i].items():
            r = ref["state"][i][key]
            assert v.dtype.name == str(r.dtype).replace("torch.", ""), key
            assert tuple(v.shape) == tuple(r.shape), key
            np.testing.assert_allclose(_np(v), r.numpy(), rtol=1e-11, atol=1e-13)


def test_nadam_mu_product_float32_matches_torch():
    ours = _run(retrograd, "NAdam", {"lr": 0.05}, "float32", STEPS).state_dict()["state"]
    ref = _run(torch, "NAdam", {"lr": 0.05}, "float32", STEPS).state_dict()["state"]
    for i in (0, 1):
        assert ours[i]["mu_product"].dtype is retrograd.float32
        assert ours[i]["mu_product"].item() == ref[i]["mu_product"].item()
        assert ours[i]["step"].item() == ref[i]["step"].item() == STEPS


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_state_dict_round_trip_continues_identically(name, kwargs):
    params, loss_fn = _problem(retrograd, "float32")
    opt = getattr(optim, name)(params, **kwargs)
    _train(retrograd, opt, params, loss_fn, 5)
    buf = io.BytesIO()
    save({"params": [p.detach().clone() for p in params], "opt": opt.state_dict()}, buf)
    ckpt = load(io.BytesIO(buf.getvalue()))
    expected = _train(retrograd, opt, params, loss_fn, 5)

    params2, loss_fn2 = _problem(retrograd, "float32")
    with retrograd.no_grad():
        for p, saved in zip(params2, ckpt["params"]):
            p.copy_(saved)
    opt2 = getattr(optim, name)(params2, **kwargs)
    opt2.load_state_dict(ckpt["opt"])
    resumed = _train(retrograd, opt2, params2, loss_fn2, 5)
    np.testing.assert_array_equal(resumed, expected)
    ref = _trajectory(torch, name, kwargs, steps=10)[5:]
    np.testing.assert_allclose(resumed, ref, rtol=1e-5, atol=1e-6)


def test_load_torch_state_dict_values():
    # a state dict made by torch (converted tensor by tensor) continues torch's trajectory
    kwargs = {"lr": 0.05, "weight_decay": 0.1}
    tparams, tloss = _problem(torch, "float64")
    topt = torch.optim.NAdam(tparams, **kwargs)
    _train(torch, topt, tparams, tloss, 4)
    tsd = topt.state_dict()
    sd = {"param_groups": tsd["param_groups"],
          "state": {i: {k: retrograd.tensor(v.numpy()) for k, v in s.items()}
                    for i, s in tsd["state"].items()}}
    params, loss_fn = _problem(retrograd, "float64")
    with retrograd.no_grad():
        for p, tp in zip(params, tparams):
            p.copy_(retrograd.tensor(tp.detach().numpy()))
    opt = optim.NAdam(params, **kwargs)
    opt.load_state_dict(sd)
    # torch's load casts the float32 mu_product to the params' float64, as ours does
    topt2 = torch.optim.NAdam(tparams, **kwargs)
    topt2.load_state_dict(tsd)
    assert opt.state[params[0]]["mu_product"].dtype is retrograd.float64
    assert topt2.state[tparams[0]]["mu_product"].dtype is torch.float64
    ours = _train(retrograd, opt, params, loss_fn, 4)
    ref = _train(torch, topt2, tparams, tloss, 4)
    np.testing.assert_allclose(ours, ref, rtol=1e-11, atol=1e-13)


NARROW_CASES = [
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.9), "weight_decay": 0.1}),
]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,kwargs", NARROW_CASES)
def test_narrow_float_params_match_torch_bitwise(dtype, name, kwargs):
    rs = np.random.RandomState(1)
    p0, target = rs.randn(64).astype(np.float32), rs.randn(64).astype(np.float32)
    out = []
    for lib in (retrograd, torch):
        dt = getattr(lib, dtype)
        p = lib.tensor(p0).to(dt).requires_grad_()
        opt = getattr(lib.optim, name)([p], **kwargs)
        for _ in range(STEPS):
            cur = np.asarray(p.detach().float().numpy())
            p.grad = lib.tensor(((cur - target) * 2).astype(np.float32)).to(dt)
            opt.step()
        assert p.dtype is dt
        out.append(np.asarray(p.detach().float().numpy()).copy())
    np.testing.assert_array_equal(out[0], out[1])


@pytest.mark.parametrize("layout", ["0-dim", "empty", "transposed"])
@pytest.mark.parametrize("name,kwargs", [c for c in CASES if "maximize" in c[1]])
def test_scalar_empty_and_non_contiguous_params(layout, name, kwargs):
    out = []
    base = np.arange(12, dtype=np.float64).reshape(3, 4) / 10 + 0.1
    for lib in (retrograd, torch):
        if layout == "0-dim":
            p = lib.tensor(0.7, dtype=lib.float64)
        elif layout == "empty":
            p = lib.zeros(0, 3, dtype=lib.float64)
        else:
            p = lib.tensor(base).t()
        p.requires_grad_()
        opt = getattr(lib.optim, name)([p], **kwargs)
        for _ in range(8):
            opt.zero_grad()
            (p * p * 1.5).sum().backward()
            opt.step()
        out.append(np.array(p.detach().numpy()))
    assert out[0].shape == out[1].shape
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


def test_param_group_defaults_filled_like_torch():
    for name in ("Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS"):
        groups = []
        for lib in (retrograd, torch):
            params, _ = _problem(lib, "float32")
            opt = getattr(lib.optim, name)([{"params": params}], lr=0.5)
            groups.append({k: v for k, v in opt.param_groups[0].items() if k != "params"})
            assert list(opt.defaults) == list(groups[-1]), name
        assert groups[0] == groups[1], name


@pytest.mark.parametrize("name,kwargs", [
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"eps": -1.0}),
    ("Adadelta", {"weight_decay": -1.0}),
    ("Adamax", {"betas": (1.0, 0.9)}), ("Adamax", {"betas": (0.9, -0.1)}),
    ("Adamax", {"eps": -1.0}),
    ("NAdam", {"momentum_decay": -1.0}), ("NAdam", {"betas": (0.9, 1.0)}),
    ("NAdam", {"weight_decay": -1.0}),
    ("RAdam", {"lr": -1.0}), ("RAdam", {"betas": (-0.5, 0.9)}), ("RAdam", {"eps": -1.0}),
    ("LBFGS", {"lr": -1.0}),
])
def test_invalid_arguments_match_torch(name, kwargs):
    messages = []
    for lib in (retrograd, torch):
        params, _ = _problem(lib, "float32")
        with pytest.raises(ValueError) as err:
            getattr(lib.optim, name)(params, **kwargs)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_differentiable_is_refused_and_foreach_accepted():
    params, loss_fn = _problem(retrograd, "float32")
    for name in ("Adadelta", "Adamax", "NAdam", "RAdam"):
        with pytest.raises(NotImplementedError, match="differentiable=True"):
            getattr(optim, name)(params, differentiable=True)
        opt = getattr(optim, name)(params, foreach=True)
        assert opt.param_groups[0]["foreach"] is True


def test_repr():
    for name in ("Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS"):
        params, _ = _problem(retrograd, "float32")
        tparams, _ = _problem(torch, "float32")
        assert repr(getattr(optim, name)(params)) == repr(getattr(torch.optim, name)(tparams))
