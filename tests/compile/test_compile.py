"""retrograd.compile: the compiled backward is one ordinary node; guards, recompiles and eager
fallbacks; in-place ops on views; the cache on disk."""

from __future__ import annotations

import json
import logging
import os
import stat
import sys

import numpy as np
import pytest

import retrograd
from retrograd.compiler import config, counters


def _leaf(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return retrograd.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)


def f(x, w):
    return ((x @ w).tanh() * 2).sum()


def test_backward_is_one_compiled_node_feeding_accumulate_grad():
    x, w = _leaf(3, 4), _leaf(4, 5, seed=1)
    out = retrograd.compile(f)(x, w)
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    assert [type(nf).__name__ for nf, _ in out.grad_fn.next_functions] == \
        ["AccumulateGrad", "AccumulateGrad"]
    seen = []
    w.register_hook(lambda g: seen.append(g.shape))
    out.backward(retain_graph=True)
    ref_x, ref_w = _leaf(3, 4), _leaf(4, 5, seed=1)
    f(ref_x, ref_w).backward()
    np.testing.assert_allclose(w.grad.numpy(), ref_w.grad.numpy(), rtol=1e-6)
    assert seen == [(4, 5)]
    (gx,) = retrograd.autograd.grad(out, [x], retain_graph=True)  # runs again
    np.testing.assert_allclose(gx.numpy(), ref_x.grad.numpy(), rtol=1e-6)
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()


def test_saved_input_modified_in_place_is_reported():
    x, w = _leaf(3, 4), _leaf(4, 5, seed=1)
    out = retrograd.compile(f)(x, w)
    with retrograd.no_grad():
        w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_double_backward_refused():
    x, w = _leaf(3, 4), _leaf(4, 5, seed=1)
    (g,) = retrograd.autograd.grad(retrograd.compile(f)(x, w), [x], create_graph=True)
    with pytest.raises(RuntimeError):
        g.sum().backward()


def view_writes(x):
    y = x * 2
    y[0].mul_(3)
    z = y.t()
    z.add_(1)
    return y.sum() + z[1].exp().sum()


def test_in_place_ops_on_views_are_functionalized():
    x = _leaf(3, 4)
    cf = retrograd.compile(view_writes)
    out = cf(x)
    out.backward()
    ref = _leaf(3, 4)
    expected = view_writes(ref)
    expected.backward()
    np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-6)
    (variant,) = cf.variants.values()
    assert variant.eager_reason is None
    assert "as_strided_scatter" in variant.forward.source
    # the in-place kernel writes a fresh copy only
    assert "add = np.array(t, copy=True)" in variant.forward.source


def test_buffers_written_by_the_function_are_written_back():
    bn = retrograd.nn.BatchNorm1d(4)
    ref = retrograd.nn.BatchNorm1d(4)
    bn.compile()
    for step in range(3):
        x = _leaf(8, 4, seed=step)
        bn(x).sum().backward()
        ref(x.detach().requires_grad_()).sum().backward()
    np.testing.assert_allclose(bn.running_mean.numpy(), ref.running_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), ref.running_var.numpy(), rtol=1e-6)
    assert int(bn.num_batches_tracked) == 3


def test_no_grad_runs_a_forward_only_graph():
    x, w = _leaf(3, 4), _leaf(4, 5, seed=1)
    cf = retrograd.compile(f)
    with retrograd.no_grad():
        out = cf(x, w)
    assert out.grad_fn is None and not out.requires_grad
    (variant,) = cf.variants.values()
    assert variant.backward is None


def test_guards_recompile_with_the_reason_logged(caplog):
    cf = retrograd.compile(f)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        cf(_leaf(3, 4), _leaf(4, 5))
        cf(_leaf(3, 4), _leaf(4, 5))          # same guards: reused
        cf(_leaf(2, 4), _leaf(4, 5))          # shape
        cf(_leaf(3, 4).double(), _leaf(4, 5).double())  # dtype
        cf(_leaf(3, 4).detach(), _leaf(4, 5))  # requires_grad
        with retrograd.no_grad():
            cf(_leaf(3, 4), _leaf(4, 5))      # grad mode
    assert counters["compiles"] == 5
    assert "arguments[0] changed" in caplog.text and "grad mode changed" in caplog.text


def test_parameter_identity_is_guarded():
    model = retrograd.nn.Linear(4, 2)
    model.compile()
    x = _leaf(3, 4)
    model(x)
    model.weight = retrograd.nn.Parameter(retrograd.randn(2, 4))
    out = model(x)
    np.testing.assert_allclose(out.detach().numpy(),
                               (x @ model.weight.t() + model.bias).detach().numpy(), rtol=1e-6)
    assert counters["compiles"] == 2


def test_train_and_eval_modes_are_guarded():
    model = retrograd.nn.Sequential(retrograd.nn.Linear(4, 4), retrograd.nn.BatchNorm1d(4))
    ref = retrograd.nn.Sequential(retrograd.nn.Linear(4, 4), retrograd.nn.BatchNorm1d(4))
    ref.load_state_dict(model.state_dict())
    model.compile()
    x = _leaf(8, 4)
    for mode in ("train", "eval", "train"):
        getattr(model, mode)()
        getattr(ref, mode)()
        np.testing.assert_allclose(model(x).detach().numpy(), ref(x).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert counters["compiles"] == 2


def test_recompile_limit_then_eager_with_a_warning():
    cf = retrograd.compile(f, dynamic=False)
    with pytest.warns(UserWarning, match="recompile_limit"):
        for n in range(1, config.recompile_limit + 3):
            out = cf(_leaf(n, 4), _leaf(4, 5))
    assert counters["compiles"] == config.recompile_limit
    assert out.grad_fn.name() != "CompiledFunctionBackward"


def branchy(x):
    if x.sum() > 0:  # data-dependent Python control flow
        return x * 2
    return x * 3


def test_data_dependent_control_flow_runs_eagerly(caplog):
    cf = retrograd.compile(branchy)
    x = _leaf(3)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        out = cf(x)
    np.testing.assert_allclose(out.detach().numpy(), branchy(x).detach().numpy())
    assert "data-dependent Tensor.bool()" in caplog.text


@pytest.mark.parametrize("read", ["item", "tolist", "numpy"])
def test_fullgraph_names_the_users_line(read):
    def g(x):
        value = getattr(x.detach() if read == "numpy" else x, read)()
        return x * 2 if value is not None else x

    cf = retrograd.compile(g, fullgraph=True)
    with pytest.raises(RuntimeError, match=rf"data-dependent Tensor\.{read}\(\) at "
                                           rf".*test_compile\.py:\d+"):
        cf(retrograd.tensor(1.0, requires_grad=True))


def test_unsupported_construct_runs_eagerly_and_is_equal():
    def g(x):
        return retrograd.tensor(x.tolist()) * x  # data leaves the graph

    x = _leaf(4)
    np.testing.assert_allclose(retrograd.compile(g)(x).detach().numpy(), g(x).detach().numpy())


def test_random_values_drawn_outside_ops_are_not_frozen():
    def g(x):
        return x + retrograd.randn(3)  # creation functions are not ops: caught by the check

    cf = retrograd.compile(g)
    x = _leaf(3)
    retrograd.manual_seed(0)
    a = cf(x)
    retrograd.manual_seed(0)
    b = g(x)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())
    assert cf(x).detach().numpy().tolist() != a.detach().numpy().tolist()


def test_generated_code_frees_values_and_reuses_buffers():
    def g(x):
        a = x.exp()
        b = a * 2
        c = b + 1
        return (c * c).sum()

    cf = retrograd.compile(g)
    with retrograd.no_grad():
        cf(_leaf(5, 5))
    src = next(iter(cf.variants.values())).forward.source
    assert "out=" in src and "= None" in src


def test_disk_cache_hit_corrupt_and_read_only(tmp_path, monkeypatch):
    x, w = _leaf(3, 4), _leaf(4, 5, seed=1)
    retrograd.compile(f)(x, w)
    files = [p for p in os.listdir(os.environ["RETROGRAD_CACHE_DIR"]) if p.endswith(".json")]
    assert len(files) == 1 and counters["cache_miss"] == 1
    retrograd.compiler.reset()  # memory cache gone: the file serves
    retrograd.compile(f)(x, w)
    assert counters["cache_hit"] == 1
    path = os.path.join(os.environ["RETROGRAD_CACHE_DIR"], files[0])
    with open(path, encoding="utf-8") as fh:
        record = json.load(fh)
    record["payload"]["forward"] = "def forward(*a):\n    return ()\n"  # hash no longer matches
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    retrograd.compiler.reset()
    with pytest.warns(UserWarning, match="ignoring the unusable cache file"):
        out = retrograd.compile(f)(x, w)
    np.testing.assert_allclose(out.item(), f(x, w).item(), rtol=1e-6)
    with open(path, encoding="utf-8") as fh:
        assert json.load(fh)["payload"]["forward"].startswith("def forward(primals_1")  # rebuilt


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0,
                    reason="root writes read-only directories")
def test_read_only_cache_dir_still_works(tmp_path, monkeypatch, caplog):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    monkeypatch.setenv("RETROGRAD_CACHE_DIR", str(ro))
    x, w = _leaf(3, 4), _leaf(4, 5, seed=1)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        out = retrograd.compile(f)(x, w)
    np.testing.assert_allclose(out.item(), f(x, w).item(), rtol=1e-6)
    assert "not written to the cache directory" in caplog.text


def test_read_only_cache_dir_as_a_file(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("RETROGRAD_CACHE_DIR", str(blocker / "cache"))
    x, w = _leaf(3, 4), _leaf(4, 5, seed=1)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        out = retrograd.compile(f)(x, w)
    np.testing.assert_allclose(out.item(), f(x, w).item(), rtol=1e-6)
    assert "not written to the cache directory" in caplog.text


def test_reset_zeroes_counters():
    retrograd.compile(f)(_leaf(3, 4), _leaf(4, 5))
    assert counters["compiles"] == 1
    retrograd.compiler.reset()
    assert counters == {"compiles": 0, "cache_hit": 0, "cache_miss": 0, "cache_bypass": 0}


def test_set_logs_graph_code_prints_the_graphs(capsys):
    from retrograd._logging import set_logs

    set_logs(graph_code=True)
    try:
        retrograd.compile(f)(_leaf(3, 4), _leaf(4, 5))
    finally:
        set_logs()
    err = capsys.readouterr().err
    assert "===== Forward graph =====" in err and "===== Backward graph =====" in err
    assert 'mm: "f32[3, 5]" = aten.mm.default(primals_1, primals_2)' in err


def test_retrograd_logs_environment_variable():
    import subprocess

    code = ("import retrograd; x = retrograd.ones(2, requires_grad=True); "
            "retrograd.compile(lambda t: (t * 3).sum())(x)")
    env = dict(os.environ, RETROGRAD_LOGS="graph_code")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    assert 'mul: "f32[2]" = aten.mul.Tensor(primals_1, 3)' in run.stderr
