"""optim.swa_utils against torch's: AveragedModel with each averaging function (parameters,
buffers, n_averaged), the averaging functions themselves, SWALR's schedule and state_dict,
update_bn's running statistics, and the argument errors."""

from __future__ import annotations

import copy
import io
import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

RS = np.random.RandomState(5)
BATCHES = [RS.randn(6, 3) for _ in range(4)]


def _np(t):
    return np.array(t.detach().numpy())


def _model(lib, dtype="float32"):
    """Linear - BatchNorm - Linear with fixed weights (the same in both libraries)."""
    dt = getattr(lib, dtype)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(),
                              lib.nn.Linear(4, 2)).to(dt)
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(np.random.RandomState(i).randn(*p.shape)))
    return model


def _train_a_little(lib, model, k):
    """Moves the weights and runs a batch (so BatchNorm's buffers change too)."""
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.mul_(0.8).add_(0.05 * (k + 1) - 0.02 * i)
    model(lib.tensor(BATCHES[k % len(BATCHES)], dtype=next(model.parameters()).dtype))


def _avg_fns(lib, which):
    swa = lib.optim.swa_utils
    return {
        "default": {},
        "ema_multi": {"multi_avg_fn": swa.get_ema_multi_avg_fn(0.9)},
        "swa_multi": {"multi_avg_fn": swa.get_swa_multi_avg_fn()},
        "ema": {"avg_fn": swa.get_ema_avg_fn(0.8)},
        "swa": {"avg_fn": swa.get_swa_avg_fn()},
        "custom": {"avg_fn": lambda avg, cur, n: avg * 0.25 + cur * 0.75 + n * 0.01},
    }[which]


def _averaged(lib, which, use_buffers, dtype, updates=4):
    model = _model(lib, dtype)
    averaged = lib.optim.swa_utils.AveragedModel(model, use_buffers=use_buffers,
                                                 **_avg_fns(lib, which))
    for k in range(updates):
        _train_a_little(lib, model, k)
        averaged.update_parameters(model)
    return averaged


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("which", ["default", "ema_multi", "swa_multi", "ema", "swa", "custom"])
def test_averaged_model_matches_torch(which, use_buffers, dtype):
    if which == "swa_multi" and use_buffers:
        # BatchNorm's integer num_batches_tracked reaches an integer addcdiv_: torch refuses it
        messages = []
        for lib in (retrograd, torch):
            with pytest.raises(RuntimeError) as err:
                _averaged(lib, which, use_buffers, dtype)
            messages.append(str(err.value))
        assert messages[0] == messages[1]
        assert messages[0].startswith("Integer division with addcdiv is no longer supported")
        return
    ours = _averaged(retrograd, which, use_buffers, dtype).state_dict()
    ref = _averaged(torch, which, use_buffers, dtype).state_dict()
    assert list(ours) == list(ref)
    tol = 1e-6 if dtype == "float32" else 1e-13
    for key, value in ours.items():
        r = ref[key]
        assert value.dtype.name == str(r.dtype).replace("torch.", ""), key
        np.testing.assert_allclose(_np(value), r.numpy(), rtol=tol, atol=tol, err_msg=key)
    assert ours["n_averaged"].item() == ref["n_averaged"].item() == 4


def test_first_update_copies_the_model_and_forward_runs_the_copy():
    results = []
    for lib in (retrograd, torch):
        model = _model(lib)
        averaged = lib.optim.swa_utils.AveragedModel(model)
        _train_a_little(lib, model, 0)
        assert averaged.n_averaged.item() == 0
        averaged.update_parameters(model)
        x = lib.tensor(BATCHES[1], dtype=lib.float32)
        model.eval()
        averaged.eval()
        out = averaged(x)
        np.testing.assert_array_equal(_np(out), _np(model(x)))
        assert averaged.module is not model
        assert averaged.n_averaged.dtype == lib.long
        results.append((_np(out), repr(averaged)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6, atol=1e-6)
    assert results[0][1] == results[1][1]


def test_averaged_model_refuses_two_averaging_functions():
    for lib in (retrograd, torch):
        swa = lib.optim.swa_utils
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be "
                                                 "provided"):
            swa.AveragedModel(_model(lib), avg_fn=swa.get_swa_avg_fn(),
                              multi_avg_fn=swa.get_swa_multi_avg_fn())


@pytest.mark.parametrize("decay", [-0.1, 1.5])
@pytest.mark.parametrize("name", ["get_ema_avg_fn", "get_ema_multi_avg_fn"])
def test_bad_decay_refused_like_torch(name, decay):
    messages = []
    for lib in (retrograd, torch):
        with pytest.raises(ValueError) as err:
            getattr(lib.optim.swa_utils, name)(decay)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_averaging_functions_on_integer_tensors_match_torch():
    results = []
    for lib in (retrograd, torch):
        swa = lib.optim.swa_utils
        a = [lib.tensor([10, 20, 31]), lib.tensor([[4, -7]])]
        b = [lib.tensor([0, 5, 1]), lib.tensor([[9, 9]])]
        with pytest.raises(RuntimeError) as err:  # a float alpha on integer tensors
            swa.get_swa_multi_avg_fn()(a, b, 2)
        message = str(err.value)
        c = [lib.tensor([10, 20, 31])]
        swa.get_ema_multi_avg_fn(0.5)(c, [lib.tensor([0, 5, 2])], 0)
        d = swa.get_swa_avg_fn()(lib.tensor([1.0, 2.0]), lib.tensor([4.0, 8.0]), 2)
        e = swa.get_ema_avg_fn(0.25)(lib.tensor([1.0, 2.0]), lib.tensor([4.0, 8.0]), 2)
        results.append((message, [_np(t).tolist() for t in a + c + [d, e]]))
    assert results[0] == results[1]


def test_swa_multi_avg_fn_with_a_count_tensor_matches_torch():
    results = []
    for lib in (retrograd, torch):
        avg = [lib.tensor([1.0, 2.0], dtype=lib.float64), lib.tensor([3.0], dtype=lib.float64)]
        cur = [lib.tensor([4.0, 8.0], dtype=lib.float64), lib.tensor([0.0], dtype=lib.float64)]
        lib.optim.swa_utils.get_swa_multi_avg_fn()(avg, cur, lib.tensor(2))
        results.append([_np(t).tolist() for t in avg])
    assert results[0] == results[1]


# --- update_bn --------------------------------------------------------------------------------

@pytest.mark.parametrize("batch_kind", ["tensor", "tuple"])
def test_update_bn_matches_torch(batch_kind):
    results = []
    for lib in (retrograd, torch):
        model = _model(lib)
        for k in range(3):
            _train_a_little(lib, model, k)
        model.eval()
        xs = [lib.tensor(b, dtype=lib.float32) for b in BATCHES]
        loader = xs if batch_kind == "tensor" else [(x, lib.zeros(6)) for x in xs]
        lib.optim.swa_utils.update_bn(loader, model)
        bn = model[1]
        assert not model.training  # the mode is restored
        assert bn.momentum == 0.1  # and so is the momentum
        results.append([_np(bn.running_mean), _np(bn.running_var),
                        bn.num_batches_tracked.item()])
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-6)
    assert results[0][2] == results[1][2] == len(BATCHES)


def test_update_bn_on_an_averaged_model_uses_the_equal_mean_of_batches():
    model = _model(retrograd)
    averaged = retrograd.optim.swa_utils.AveragedModel(model)
    averaged.update_parameters(model)
    xs = [retrograd.tensor(b, dtype=retrograd.float32) for b in BATCHES]
    retrograd.optim.swa_utils.update_bn(xs, averaged)
    layer = averaged.module[0]
    with retrograd.no_grad():
        hidden = [_np(layer(x)) for x in xs]
    expected = np.mean([h.mean(0) for h in hidden], axis=0)
    np.testing.assert_allclose(_np(averaged.module[1].running_mean), expected, rtol=1e-5,
                               atol=1e-6)


def test_update_bn_without_batch_norm_does_nothing():
    for lib in (retrograd, torch):
        model = lib.nn.Linear(3, 2)
        calls = []

        class Loader:
            def __iter__(self, calls=calls):
                calls.append(1)
                return iter([])

        lib.optim.swa_utils.update_bn(Loader(), model)
        assert calls == []


# --- SWALR ------------------------------------------------------------------------------------

def _swalr_run(lib, kwargs, steps=14, lrs=(0.5, 0.2)):
    params = [lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)]
    opt = lib.optim.SGD([{"params": [params[0]], "lr": lrs[0]},
                         {"params": [params[1]], "lr": lrs[1]}])
    sched = lib.optim.swa_utils.SWALR(opt, **kwargs)
    seen = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        seen.append(sched.get_last_lr())
    return seen, opt, sched


SWALR_CASES = [
    {"swa_lr": 0.05},
    {"swa_lr": 0.05, "anneal_epochs": 5, "anneal_strategy": "linear"},
    {"swa_lr": [0.01, 0.3], "anneal_epochs": 3},
    {"swa_lr": 0.05, "anneal_epochs": 0},
    {"swa_lr": 0.05, "anneal_epochs": 1, "anneal_strategy": "linear"},
]


@pytest.mark.parametrize("kwargs", SWALR_CASES)
def test_swalr_schedule_matches_torch(kwargs):
    ours, opt, sched = _swalr_run(retrograd, kwargs)
    ref, ref_opt, ref_sched = _swalr_run(torch, kwargs)
    assert ours == ref
    strip = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
    ref_strip = [{k: v for k, v in g.items() if k != "params"} for g in ref_opt.param_groups]
    assert strip == ref_strip
    assert sched.state_dict() == ref_sched.state_dict()


def test_swalr_follows_lr_changes_made_between_steps_like_torch():
    results = []
    for lib in (retrograd, torch):
        param = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([param], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=4)
        seen = []
        for k in range(6):
            opt.step()
            if k == 1:
                opt.param_groups[0]["lr"] *= 3
            sched.step()
            seen.append(opt.param_groups[0]["lr"])
        results.append(seen)
    assert results[0] == results[1]


def test_swalr_state_dict_round_trip_keeps_the_strategy():
    _, _, sched = _swalr_run(retrograd, {"swa_lr": 0.05, "anneal_strategy": "linear",
                                         "anneal_epochs": 6}, steps=2)
    state = copy.deepcopy(sched.state_dict())
    assert "anneal_func" not in state and "optimizer" not in state
    buffer = io.BytesIO()
    retrograd.save(state, buffer)
    buffer.seek(0)
    loaded = retrograd.load(buffer)
    _, opt2, other = _swalr_run(retrograd, {"swa_lr": 0.05}, steps=0)
    other.load_state_dict(loaded)
    assert other.anneal_func is other._linear_anneal
    assert other.anneal_epochs == 6


@pytest.mark.parametrize("kwargs", [
    {"swa_lr": 0.05, "anneal_strategy": "exp"},
    {"swa_lr": 0.05, "anneal_epochs": -1},
    {"swa_lr": 0.05, "anneal_epochs": 2.5},
    {"swa_lr": [0.1, 0.2, 0.3]},
])
def test_swalr_bad_arguments_refused_like_torch(kwargs):
    messages = []
    for lib in (retrograd, torch):
        opt = lib.optim.SGD([{"params": [lib.zeros(1, requires_grad=True)]},
                             {"params": [lib.zeros(1, requires_grad=True)]}], lr=0.1)
        with pytest.raises(ValueError) as err:
            lib.optim.swa_utils.SWALR(opt, **kwargs)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_swalr_get_lr_outside_step_warns_like_torch():
    for lib in (retrograd, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.01)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.get_lr()
        assert any("please use `get_last_lr()`" in str(w.message) for w in caught)


def test_public_names_match_torch():
    assert retrograd.optim.swa_utils.__all__ == torch.optim.swa_utils.__all__
    assert "swa_utils" in retrograd.optim.__all__
