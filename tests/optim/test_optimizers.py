"""retrograd.optim optimizers against torch.optim: trajectories, param groups, state_dict."""

import copy
import io
import warnings

import numpy as np
import pytest

import retrograd
import retrograd.optim as optim

torch = pytest.importorskip("torch")

RS = np.random.RandomState(0)
W0 = RS.randn(3, 2)
B0 = RS.randn(2)
X = RS.randn(8, 3)
Y = RS.randn(8, 2)
STEPS = 20


def _np(t):
    return np.array(t.detach().numpy())


def _problem(lib, dtype):
    """A tiny linear regression: parameters W, b and a closure computing the loss."""
    dt = getattr(lib, dtype)
    w = lib.tensor(W0, dtype=dt, requires_grad=True)
    b = lib.tensor(B0, dtype=dt, requires_grad=True)
    x, y = lib.tensor(X, dtype=dt), lib.tensor(Y, dtype=dt)

    def loss_fn():
        return ((x @ w + b - y) ** 2).mean()

    return [w, b], loss_fn


def _train(lib, opt, params, loss_fn, steps):
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
        traj.append(np.concatenate([_np(p).ravel() for p in params]))
    return np.array(traj)


def _trajectory(lib, name, kwargs, dtype="float32", steps=STEPS):
    params, loss_fn = _problem(lib, dtype)
    opt = getattr(lib.optim, name)(params, **kwargs)
    return _train(lib, opt, params, loss_fn, steps)


CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "nesterov": True, "weight_decay": 0.2,
             "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6, "amsgrad": True,
              "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.2, "amsgrad": True}),
    ("AdamW", {"lr": 0.05, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-6}),
    ("Adagrad", {"lr": 0.1, "maximize": True, "lr_decay": 0.01}),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in CASES]


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_trajectory_float32_matches_torch(name, kwargs):
    ours = _trajectory(retrograd, name, kwargs)
    ref = _trajectory(torch, name, kwargs)
    assert ours.dtype == np.float32
    # torch fuses multiply-adds (FMA) and its float32 sqrt is not correctly rounded, so
    # individual elements differ by an ulp or so; atol covers elements passing through zero
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_trajectory_float64_follows_torch_algorithm(name, kwargs):
    # in float64 rounding differences are ~1e-16: a tight tolerance checks the algorithm itself
    ours = _trajectory(retrograd, name, kwargs, "float64")
    ref = _trajectory(torch, name, kwargs, "float64")
    np.testing.assert_allclose(ours, ref, rtol=1e-11, atol=1e-13)


def test_trajectory_float32_stays_float32_and_bumps_versions():
    params, loss_fn = _problem(retrograd, "float32")
    opt = optim.Adam(params, lr=0.1)
    v0 = [p._version for p in params]
    loss_fn().backward()
    opt.step()
    assert all(p.dtype is retrograd.float32 for p in params)
    assert all(s["exp_avg"].dtype is retrograd.float32 for s in opt.state.values())
    assert [p._version for p in params] == [v + 1 for v in v0]
    assert opt.state[params[0]]["step"].dtype is retrograd.float32
    assert opt.state[params[0]]["step"].item() == 1.0


def _groups(lib, dtype="float32"):
    params, loss_fn = _problem(lib, dtype)
    return params, loss_fn, [{"params": [params[0]], "lr": 0.1},
                             {"params": [params[1]], "lr": 0.01, "momentum": 0.5}]


def test_param_groups_with_different_lrs():
    trajs = []
    for lib in (retrograd, torch):
        params, loss_fn, groups = _groups(lib)
        opt = lib.optim.SGD(groups, lr=1.0, momentum=0.9)
        assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
        assert [g["momentum"] for g in opt.param_groups] == [0.9, 0.5]
        trajs.append(_train(lib, opt, params, loss_fn, STEPS))
    np.testing.assert_allclose(trajs[0], trajs[1], rtol=1e-5, atol=1e-6)


def test_param_group_defaults_filled_like_torch():
    _, _, rgroups = _groups(retrograd)
    _, _, tgroups = _groups(torch)
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        r = getattr(optim, name)([dict(rgroups[0])], lr=0.5)
        t = getattr(torch.optim, name)([dict(tgroups[0])], lr=0.5)
        rg_keys = {k: v for k, v in r.param_groups[0].items() if k != "params"}
        t_keys = {k: v for k, v in t.param_groups[0].items() if k != "params"}
        assert rg_keys == t_keys, name
        assert r.defaults.keys() == t.defaults.keys(), name


def test_add_param_group():
    params, loss_fn = _problem(retrograd, "float32")
    opt = optim.SGD([params[0]], lr=0.1)
    opt.add_param_group({"params": params[1], "lr": 0.5})
    assert len(opt.param_groups) == 2
    assert opt.param_groups[1]["params"] == [params[1]]
    assert opt.param_groups[1]["momentum"] == 0
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": [params[0]]})


def test_named_params_give_param_names():
    params, _ = _problem(retrograd, "float32")
    opt = optim.SGD([("w", params[0]), ("b", params[1])], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


def test_zero_grad():
    params, loss_fn = _problem(retrograd, "float32")
    opt = optim.SGD(params, lr=0.1)
    loss_fn().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any().item() for p in params)
    grad = params[0].grad
    loss_fn().backward()
    assert params[0].grad is grad  # zeroed in place, accumulated into again
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_params_without_grad_are_skipped():
    params, loss_fn = _problem(retrograd, "float32")
    opt = optim.Adam(params, lr=0.1)
    before = _np(params[1])
    loss_fn().backward()
    params[1].grad = None
    opt.step()
    np.testing.assert_array_equal(_np(params[1]), before)
    assert params[1] not in opt.state


def test_closure_runs_with_grad_and_returns_loss():
    params, loss_fn = _problem(retrograd, "float32")
    opt = optim.SGD(params, lr=0.1)
    seen = []

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        seen.append(retrograd.is_grad_enabled())
        loss.backward()
        return loss

    with retrograd.no_grad():
        loss = opt.step(closure)
    assert seen == [True]
    assert isinstance(loss, retrograd.Tensor)


def test_step_runs_under_no_grad():
    params, loss_fn = _problem(retrograd, "float32")
    seen = []

    class Probe(optim.SGD):
        def step(self, closure=None):
            seen.append(retrograd.is_grad_enabled())
            return super().step(closure)

    opt = Probe(params, lr=0.1)
    loss_fn().backward()
    opt.step()
    assert seen == [False]
    assert retrograd.is_grad_enabled()
    assert params[0].grad_fn is None and params[0].requires_grad


def test_step_hooks():
    params, loss_fn = _problem(retrograd, "float32")
    opt = optim.SGD(params, lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    opt.step()
    assert calls == ["pre", "post"]
    h1.remove()
    h2.remove()
    opt.step()
    assert calls == ["pre", "post"]


def _state_values(sd):
    return {i: {k: (np.array(v.detach().numpy()) if hasattr(v, "detach") else v)
                for k, v in s.items()} for i, s in sd["state"].items()}


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("AdamW", {"lr": 0.05}), ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
])
def test_state_dict_structure_matches_torch(name, kwargs):
    sds = []
    for lib in (retrograd, torch):
        params, loss_fn = _problem(lib, "float64")
        opt = getattr(lib.optim, name)(params, **kwargs)
        _train(lib, opt, params, loss_fn, 3)
        sds.append(opt.state_dict())
    ours, ref = sds
    assert ours["param_groups"] == ref["param_groups"]
    assert ours["state"].keys() == ref["state"].keys() == {0, 1}
    for i in ours["state"]:
        assert list(ours["state"][i]) == list(ref["state"][i])
        for key, v in ours["state"][i].items():
            assert v.dtype.name == str(ref["state"][i][key].dtype).replace("torch.", "")
            np.testing.assert_allclose(_np(v), ref["state"][i][key].numpy(), rtol=1e-12)


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.05}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
])
def test_state_dict_round_trip_continues_identically(name, kwargs):
    params, loss_fn = _problem(retrograd, "float32")
    opt = getattr(optim, name)(params, **kwargs)
    _train(retrograd, opt, params, loss_fn, 10)
    # a checkpoint: parameters and optimizer state through retrograd.save / load
    buf = io.BytesIO()
    from retrograd.serialization import load, save

    save({"params": [p.detach().clone() for p in params], "opt": opt.state_dict()}, buf)
    ckpt = load(io.BytesIO(buf.getvalue()))
    expected = _train(retrograd, opt, params, loss_fn, 10)

    params2, loss_fn2 = _problem(retrograd, "float32")
    with retrograd.no_grad():
        for p, saved in zip(params2, ckpt["params"]):
            p.copy_(saved)
    opt2 = getattr(optim, name)(params2, **kwargs)
    opt2.load_state_dict(ckpt["opt"])
    resumed = _train(retrograd, opt2, params2, loss_fn2, 10)
    np.testing.assert_array_equal(resumed, expected)
    # and both continue torch's trajectory
    ref = _trajectory(torch, name, kwargs, steps=20)[10:]
    np.testing.assert_allclose(resumed, ref, rtol=1e-5, atol=1e-6)


def test_load_state_dict_mismatch_errors():
    params, _ = _problem(retrograd, "float32")
    opt = optim.SGD(params, lr=0.1)
    sd = opt.state_dict()
    other = optim.SGD([params[0]], lr=0.1)
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        other.load_state_dict(sd)
    two = optim.SGD([{"params": [params[0]]}, {"params": [params[1]]}], lr=0.1)
    with pytest.raises(ValueError, match="loaded state dict has a different number of "
                                         "parameter groups"):
        two.load_state_dict(sd)


def test_load_state_dict_casts_state_to_param_dtype():
    params, loss_fn = _problem(retrograd, "float64")
    opt = optim.Adam(params, lr=0.1)
    _train(retrograd, opt, params, loss_fn, 2)
    sd = opt.state_dict()
    p32 = [p.detach().float().requires_grad_() for p in params]
    opt32 = optim.Adam(p32, lr=0.1)
    opt32.load_state_dict(sd)
    state = opt32.state[p32[0]]
    assert state["exp_avg"].dtype is retrograd.float32
    assert state["step"].dtype is sd["state"][0]["step"].dtype  # step keeps its dtype


def test_optimizer_with_nn_module_and_deepcopy():
    nn = pytest.importorskip("retrograd.nn")
    model = nn.Linear(3, 2)
    opt = optim.AdamW(model.parameters(), lr=0.01)
    model(retrograd.randn(4, 3)).sum().backward()
    opt.step()
    clone = copy.deepcopy(opt)
    assert clone.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    assert len(clone.state) == 2


@pytest.mark.parametrize("name,kwargs,message", [
    ("SGD", {"lr": -0.1}, "Invalid learning rate: -0.1"),
    ("SGD", {"lr": 0.1, "momentum": -1}, "Invalid momentum value: -1"),
    ("SGD", {"lr": 0.1, "weight_decay": -1}, "Invalid weight_decay value: -1"),
    ("SGD", {"lr": 0.1, "nesterov": True},
     "Nesterov momentum requires a momentum and zero dampening"),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "nesterov": True},
     "Nesterov momentum requires a momentum and zero dampening"),
    ("Adam", {"lr": -1.0}, "Invalid learning rate: -1.0"),
    ("Adam", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
    ("Adam", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
    ("Adam", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
    ("Adam", {"betas": (0, 0.9)}, "betas must be either both floats or both Tensors"),
    ("AdamW", {"weight_decay": -1.0}, "Invalid weight_decay value: -1.0"),
    ("RMSprop", {"alpha": -1.0}, "Invalid alpha value: -1.0"),
    ("RMSprop", {"momentum": -1.0}, "Invalid momentum value: -1.0"),
    ("RMSprop", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
    ("Adagrad", {"lr_decay": -1.0}, "Invalid lr_decay value: -1.0"),
    ("Adagrad", {"initial_accumulator_value": -1.0},
     "Invalid initial_accumulator_value value: -1.0"),
])
def test_invalid_arguments_match_torch(name, kwargs, message):
    for lib in (retrograd, torch):
        params, _ = _problem(lib, "float32")
        with pytest.raises(ValueError) as err:
            getattr(lib.optim, name)(params, **kwargs)
        assert str(err.value) == message, lib.__name__


def test_empty_params_error():
    for lib in (retrograd, torch):
        with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
            lib.optim.SGD([], lr=0.1)


def test_type_errors_match_torch():
    params, _ = _problem(retrograd, "float32")
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an "
                                        "iterable of Tensors or dicts, but got "
                                        "retrograd.FloatTensor"):
        optim.SGD(params[0], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the "
                                        "params is int"):
        optim.SGD([1], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([params[0] * 2], lr=0.1)
    with pytest.raises(TypeError, match="optimizer parameters need to be organized in ordered "
                                        "collections"):
        optim.SGD([{"params": {params[0]}}], lr=0.1)


def test_duplicate_params_warn():
    params, _ = _problem(retrograd, "float32")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        optim.SGD([params[0], params[0]], lr=0.1)
    assert any("duplicate parameters" in str(x.message) for x in w)


def test_tensor_lr():
    trajs = []
    for lib in (retrograd, torch):
        params, loss_fn = _problem(lib, "float32")
        opt = lib.optim.Adam(params, lr=lib.tensor(0.05))
        trajs.append(_train(lib, opt, params, loss_fn, 5))
    np.testing.assert_allclose(trajs[0], trajs[1], rtol=1e-5, atol=1e-6)


def test_float64_default_dtype_makes_float64_steps():
    prev = retrograd.get_default_dtype()
    retrograd.set_default_dtype(retrograd.float64)
    try:
        params, loss_fn = _problem(retrograd, "float64")
        opt = optim.Adam(params)
        loss_fn().backward()
        opt.step()
        assert opt.state[params[0]]["step"].dtype is retrograd.float64
    finally:
        retrograd.set_default_dtype(prev)


def test_repr():
    params, _ = _problem(retrograd, "float32")
    tparams, _ = _problem(torch, "float32")
    assert repr(optim.Adam(params, lr=0.5)) == repr(torch.optim.Adam(tparams, lr=0.5))


NARROW_CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"lr": 0.05}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1}),
]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,kwargs", NARROW_CASES)
def test_narrow_float_params_match_torch_bitwise(dtype, name, kwargs):
    # the same gradients fed to both (a function of the current parameter): the updates are
    # computed in float32 and rounded like torch's, so the parameters agree bit for bit
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


SHAPE_CASES = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1,
             "maximize": True}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"lr": 0.05}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1,
                 "maximize": True}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "maximize": True}),
]


@pytest.mark.parametrize("layout", ["0-dim", "empty", "transposed"])
@pytest.mark.parametrize("name,kwargs", SHAPE_CASES)
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
        for _ in range(3):
            opt.zero_grad()
            (p * p * 1.5).sum().backward()
            opt.step()
        out.append(np.array(p.detach().numpy()))
        if layout == "transposed":
            assert not p.is_contiguous()
    assert out[0].shape == out[1].shape
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)
