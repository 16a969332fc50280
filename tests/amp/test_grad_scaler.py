"""GradScaler against torch.amp.GradScaler('cpu'): scaling, unscaling, skipped steps on
inf/nan, growth and backoff, state_dict, errors; the disabled and torch.cuda.amp forms."""

import io
import pickle
import warnings

import numpy as np
import pytest

import retrograd
from retrograd.serialization import load, save

torch = pytest.importorskip("torch")

RS = np.random.RandomState(0)
W0 = RS.randn(4, 3).astype(np.float32)
X = RS.randn(6, 4).astype(np.float32)
Y = RS.randn(6, 3).astype(np.float32)


def _train(lib, steps, bad_steps=(), scaler_kwargs=None, unscale_and_clip=False, opt="SGD"):
    """A loop with a scaler; on bad_steps a gradient is poisoned with inf (or nan)."""
    w = lib.tensor(W0, requires_grad=True)
    x, y = lib.tensor(X), lib.tensor(Y)
    optimizer = getattr(lib.optim, opt)([w], lr=0.05)
    scaler = lib.amp.GradScaler("cpu", **(scaler_kwargs or {}))
    log = []
    for i in range(steps):
        optimizer.zero_grad()
        with lib.autocast("cpu"):
            loss = ((x @ w).float() - y).pow(2).mean()
        scaler.scale(loss).backward()
        if i in bad_steps:
            with lib.no_grad():
                w.grad[0, 0] = float("inf") if i % 2 else float("nan")
        if unscale_and_clip:
            scaler.unscale_(optimizer)
            lib.nn.utils.clip_grad_norm_([w], 0.5)
        ret = scaler.step(optimizer)
        scaler.update()
        log.append((scaler.get_scale(), scaler._get_growth_tracker(), ret,
                    np.array(w.detach().numpy()).copy()))
    return log, scaler, optimizer


@pytest.mark.parametrize("kwargs,bad", [
    ({}, ()),
    ({"init_scale": 1024.0, "growth_interval": 3}, (4,)),
    ({"init_scale": 8.0, "growth_interval": 2, "growth_factor": 4.0, "backoff_factor": 0.25},
     (1, 2, 6)),
    ({"init_scale": 3.0e38, "growth_interval": 1}, ()),  # growth past float32 max is refused
])
def test_training_loop_matches_torch(kwargs, bad):
    ours, our_scaler, _ = _train(retrograd, 9, bad, kwargs)
    ref, ref_scaler, _ = _train(torch, 9, bad, kwargs)
    for (s, g, r, w), (ts, tg, tr, tw) in zip(ours, ref):
        assert s == ts and g == tg
        assert r is None and tr is None  # SGD.step returns None; skipped steps too
        np.testing.assert_allclose(w, tw, rtol=1e-5, atol=1e-6)
    assert our_scaler.state_dict() == ref_scaler.state_dict()


def test_skipped_steps_leave_params_and_optimizer_state_alone():
    ours, _, opt = _train(retrograd, 4, bad_steps=(2,), opt="Adam")
    np.testing.assert_array_equal(ours[2][3], ours[1][3])
    assert opt.state[opt.param_groups[0]["params"][0]]["step"].item() == 3
    assert ours[2][0] == ours[1][0] / 2


def test_unscale_then_clip_matches_torch():
    ours, _, _ = _train(retrograd, 5, (3,), {"init_scale": 256.0}, unscale_and_clip=True)
    ref, _, _ = _train(torch, 5, (3,), {"init_scale": 256.0}, unscale_and_clip=True)
    for o, r in zip(ours, ref):
        assert o[:2] == r[:2]
        np.testing.assert_allclose(o[3], r[3], rtol=1e-5, atol=1e-6)


def test_scale_outputs_and_iterables():
    for lib in (retrograd, torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        assert scaler.get_scale() == 4.0
        a = lib.ones(2)
        out = scaler.scale([a, (a, a * 2)])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert out[1][1].tolist() == [8.0, 8.0]
        assert scaler.scale(a).dtype == lib.float32
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of "
                                             "Tensors"):
            scaler.scale([1.0])


def test_unscale_divides_and_detects_non_finite_values():
    for lib in (retrograd, torch):
        w = lib.zeros(3, requires_grad=True)
        optimizer = lib.optim.SGD([w], lr=1.0)
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0)
        scaler.scale((w * lib.tensor([1.0, 2.0, 3.0])).sum()).backward()
        scaler.unscale_(optimizer)
        assert w.grad.tolist() == [1.0, 2.0, 3.0]
        assert sum(v.item() for v in scaler._found_inf_per_device(optimizer).values()) == 0
        w.grad = lib.tensor([1.0, float("nan"), 1.0])
        scaler.update()
        scaler.scale(w.sum())
        scaler.unscale_(optimizer)
        assert sum(v.item() for v in scaler._found_inf_per_device(optimizer).values()) == 1


def test_state_dict_round_trip():
    _, scaler, _ = _train(retrograd, 5, (2,), {"init_scale": 64.0, "growth_interval": 2})
    sd = scaler.state_dict()
    _, ref_scaler, _ = _train(torch, 5, (2,), {"init_scale": 64.0, "growth_interval": 2})
    assert sd == ref_scaler.state_dict()
    assert set(sd) == {"scale", "growth_factor", "backoff_factor", "growth_interval",
                       "_growth_tracker"}
    buf = io.BytesIO()
    save(sd, buf)
    other = retrograd.amp.GradScaler("cpu")
    other.load_state_dict(load(io.BytesIO(buf.getvalue())))
    assert other.state_dict() == sd
    assert other.get_scale() == sd["scale"]
    # a scaler whose scale tensor already exists takes the loaded values too
    used = retrograd.amp.GradScaler("cpu")
    used.scale(retrograd.ones(1))
    used.load_state_dict(sd)
    assert used.get_scale() == sd["scale"] and used._get_growth_tracker() == sd["_growth_tracker"]
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.state_dict() == sd


def test_update_with_new_scale():
    for lib in (retrograd, torch):
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(lib.ones(1))
        scaler.update(16.0)
        assert scaler.get_scale() == 16.0
        scaler.update(lib.tensor(2.0))
        assert scaler.get_scale() == 2.0
        with pytest.raises(AssertionError, match="new_scale should be a float or a 1-element"):
            scaler.update(lib.ones(2))


def test_errors_match_torch():
    for lib in (retrograd, torch):
        w = lib.zeros(2, requires_grad=True)
        optimizer = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
            scaler.step(optimizer)
        scaler.scale(w.sum()).backward()
        with pytest.raises(RuntimeError, match="Closure use is not currently supported if "
                                               "GradScaler is enabled."):
            scaler.step(optimizer, closure=lambda: None)
        scaler.unscale_(optimizer)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this "
                                               "optimizer since the last update\\(\\)."):
            scaler.unscale_(optimizer)
        scaler.step(optimizer)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the "
                                               "last update\\(\\)."):
            scaler.step(optimizer)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
            scaler.unscale_(optimizer)
        scaler.update()
        with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
            scaler.update()
        with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
            lib.amp.GradScaler("cpu", growth_factor=1.0)
        with pytest.raises(AssertionError, match="The backoff factor must be < 1.0."):
            lib.amp.GradScaler("cpu", backoff_factor=1.0)
        h = lib.zeros(2, dtype=lib.float16, requires_grad=True)
        opt16 = lib.optim.SGD([h], lr=0.1)
        scaler16 = lib.amp.GradScaler("cpu")
        scaler16.scale(h.float().sum()).backward()
        with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
            scaler16.unscale_(opt16)
        empty = lib.amp.GradScaler("cpu")
        with pytest.raises(RuntimeError, match="The source state dict is empty"):
            empty.load_state_dict({})


def test_disabled_scaler_is_a_pass_through():
    for lib in (retrograd, torch):
        w = lib.ones(2, requires_grad=True)
        optimizer = lib.optim.SGD([w], lr=0.5)
        scaler = lib.amp.GradScaler("cpu", enabled=False)
        loss = w.sum()
        assert scaler.scale(loss) is loss
        loss.backward()
        scaler.unscale_(optimizer)
        assert scaler.step(optimizer) is None
        scaler.update()
        assert w.tolist() == [0.5, 0.5]
        assert scaler.get_scale() == 1.0 and not scaler.is_enabled()
        assert scaler.state_dict() == {}
        scaler.load_state_dict({})


def _caught(fn, **kwargs):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(**kwargs)
    return out, [(x.category, str(x.message)) for x in w]


def test_cuda_amp_names_warn_and_pass_through_like_torch():
    assert not retrograd.cuda.is_available() and retrograd.cuda.device_count() == 0
    for enabled in (False, True):
        ours, our_warnings = _caught(retrograd.cuda.amp.GradScaler, enabled=enabled)
        ref, ref_warnings = _caught(torch.cuda.amp.GradScaler, enabled=enabled)
        assert our_warnings == ref_warnings
        assert not ours.is_enabled() and not ref.is_enabled()
        ours, our_warnings = _caught(retrograd.cuda.amp.autocast, enabled=enabled)
        ref, ref_warnings = _caught(torch.cuda.amp.autocast, enabled=enabled)
        assert our_warnings == ref_warnings
        a = retrograd.randn(2, 2)
        with ours:
            assert not retrograd.is_autocast_enabled("cuda")
            assert (a @ a).dtype is retrograd.float32

        @retrograd.cuda.amp.autocast(enabled=False)
        def f(t):
            return t @ t

        assert f(a).dtype is retrograd.float32


def test_grad_scaler_default_device_is_cuda_like_torch():
    ours, our_warnings = _caught(retrograd.amp.GradScaler)
    ref, ref_warnings = _caught(torch.amp.GradScaler)
    assert our_warnings == ref_warnings
    assert ours.is_enabled() == ref.is_enabled() is False
