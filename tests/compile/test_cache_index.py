"""The pre-capture index (NOTE [Pre-capture index]): a function compiled before loads its
variant without capturing, from memory or from disk in a new process; anything that may change
what capture records (code, closure and global values, hooks, guards) misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import retrograd
from retrograd._compiler import build as build_module
from retrograd._compiler import cache
from retrograd.autograd.graph import saved_tensors_hooks
from retrograd.compiler import config, counters
from retrograd.fx.experimental.proxy_tensor import make_fx

SCALE = 2.0


@pytest.fixture
def captures(monkeypatch):
    """How many times capture ran."""
    seen = []
    real = build_module.capture_joint

    def counting(*a, **k):
        seen.append(1)
        return real(*a, **k)

    monkeypatch.setattr(build_module, "capture_joint", counting)
    return seen


def _inputs(lib, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal((3, 4)).astype(np.float32)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    return (lib.tensor(x0, requires_grad=True), lib.tensor(w0, requires_grad=True))


def chain(steps):
    def f(x, w):
        y = x
        for _ in range(steps):
            y = (y * w + w).tanh()
        return y.sum() * SCALE

    return f


def _check_against_torch(fn, steps):
    x, w = _inputs(retrograd)
    out = fn(x, w)
    out.backward()
    tx, tw = _inputs(torch)
    ref = chain(steps)(tx, tw)
    ref.backward()
    np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_hit_loads_the_variant_without_capturing(captures):
    f = chain(3)
    _check_against_torch(retrograd.compile(f), 3)
    assert (len(captures), counters["cache_miss"], counters["cache_hit"]) == (1, 1, 0)
    _check_against_torch(retrograd.compile(f), 3)            # a new compiled callable
    _check_against_torch(retrograd.compile(chain(3)), 3)     # a new function, same identity
    assert (len(captures), counters["cache_miss"], counters["cache_hit"]) == (1, 1, 2)


def test_new_guards_capture(captures):
    f = chain(2)
    retrograd.compile(f)(*_inputs(retrograd))
    x = retrograd.rand(5, requires_grad=True)
    out = retrograd.compile(f)(x, x)
    np.testing.assert_allclose(out.item(), f(x, x).item(), rtol=1e-6)
    with retrograd.no_grad():
        retrograd.compile(f)(*_inputs(retrograd))
    assert len(captures) == 3


def test_changed_closure_value_misses(captures):
    _check_against_torch(retrograd.compile(chain(2)), 2)
    _check_against_torch(retrograd.compile(chain(3)), 3)
    assert len(captures) == 2 and counters["cache_hit"] == 0


def test_changed_global_value_misses(captures, monkeypatch):
    f = chain(2)
    x, w = _inputs(retrograd)
    first = retrograd.compile(f)(x, w).item()
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3.0)
    second = retrograd.compile(f)(x, w).item()
    assert len(captures) == 2
    np.testing.assert_allclose(second, first * 1.5, rtol=1e-6)


def _helper(y):
    return y * 2


def uses_helper(x, w):
    return _helper(x * w).sum()


def test_changed_global_function_misses(captures, monkeypatch):
    x, w = _inputs(retrograd)
    first = retrograd.compile(uses_helper)(x, w).item()
    monkeypatch.setattr(sys.modules[__name__], "_helper", lambda y: y * 3)
    second = retrograd.compile(uses_helper)(x, w).item()
    assert len(captures) == 2
    np.testing.assert_allclose(second, first * 1.5, rtol=1e-6)


class _Holder:
    k = 2.0


def test_doubt_captures_each_time(captures):
    t = retrograd.rand(3, 4)
    holder = _Holder()

    def reads_tensor(x, w):
        return (x * w * t).sum()

    def reads_object(x, w):
        return (x * w * holder.k).sum()

    def reads_by_name(x, w):  # a global the bytecode does not name
        return (x * w * globals()["SCALE"]).sum()

    for fn in (reads_tensor, reads_object, reads_by_name):
        for _ in range(2):
            x, w = _inputs(retrograd)
            out = retrograd.compile(fn)(x, w)
            np.testing.assert_allclose(out.item(), fn(x, w).item(), rtol=1e-6)
    assert len(captures) == 6  # (the second capture of each finds its graph's code cached)


def test_data_dependent_function_captures_again_and_runs_eagerly(captures):
    def branchy(x, w):
        if x.sum() > 0:
            return (x * w).sum()
        return (x - w).sum()

    for _ in range(2):
        x, w = _inputs(retrograd)
        out = retrograd.compile(branchy)(x, w)
        np.testing.assert_allclose(out.item(), branchy(x, w).item(), rtol=1e-6)
    assert len(captures) == 2 and counters["cache_hit"] == 0


def _pair(scale):
    example = retrograd.randn(3, 4)

    def pack(t):
        return t * scale

    def unpack(t):
        return t / scale

    return make_fx(pack)(example), make_fx(unpack)(pack(example))


def test_hooks_same_structure_hit_other_structure_misses(captures):
    f = chain(2)
    results = []
    for scale in (2.0, 2.0, 4.0):
        x, w = _inputs(retrograd)
        with saved_tensors_hooks(*_pair(scale)):
            out = retrograd.compile(f)(x, w)
        out.backward()
        results.append((out.item(), x.grad.numpy().copy()))
    assert len(captures) == 2 and counters["cache_hit"] == 1
    for value, grad in results[1:]:
        np.testing.assert_allclose(value, results[0][0], rtol=1e-6)
        np.testing.assert_allclose(grad, results[0][1], rtol=1e-5, atol=1e-6)


def test_disk_index_serves_after_reset_and_corrupt_entry_warns(captures):
    f = chain(2)
    x, w = _inputs(retrograd)
    expected = f(x, w).item()
    retrograd.compile(f)(x, w)
    index_dir = os.path.join(os.environ["RETROGRAD_CACHE_DIR"], "index")
    files = os.listdir(index_dir)
    assert len(files) == 1
    retrograd.compiler.reset()
    np.testing.assert_allclose(retrograd.compile(f)(x, w).item(), expected, rtol=1e-6)
    assert len(captures) == 1 and counters["cache_hit"] == 1
    path = os.path.join(index_dir, files[0])
    with open(path, encoding="utf-8") as fh:
        record = json.load(fh)
    record["payload"]["meta"]["n_outputs"] = 5  # the content hash no longer matches
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    retrograd.compiler.reset()
    with pytest.warns(UserWarning, match="ignoring the unusable cache file"):
        out = retrograd.compile(f)(x, w)
    np.testing.assert_allclose(out.item(), expected, rtol=1e-6)
    assert len(captures) == 2
    with open(path, encoding="utf-8") as fh:
        assert json.load(fh)["payload"]["meta"]["n_outputs"] == 1  # rebuilt


def test_index_entry_of_another_version_is_ignored(captures):
    f = chain(2)
    x, w = _inputs(retrograd)
    retrograd.compile(f)(x, w)
    index_dir = os.path.join(os.environ["RETROGRAD_CACHE_DIR"], "index")
    path = os.path.join(index_dir, os.listdir(index_dir)[0])
    with open(path, encoding="utf-8") as fh:
        record = json.load(fh)
    record["version"] = "0.0.0-other"
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    retrograd.compiler.reset()
    with pytest.warns(UserWarning, match="ignoring the unusable cache file"):
        retrograd.compile(f)(x, w)
    assert len(captures) == 2


_PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import retrograd
    from retrograd._compiler import build

    runs = []
    real = build.capture_joint
    build.capture_joint = lambda *a, **k: runs.append(1) or real(*a, **k)

    def f(x, w):
        y = (x * w + w).tanh()
        return (y * y).sum()

    x = retrograd.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, requires_grad=True)
    w = retrograd.tensor(np.ones((3, 4), np.float32) / 3, requires_grad=True)
    out = retrograd.compile(f)(x, w)
    out.backward()
    print(json.dumps({"captures": len(runs), "hit": retrograd.compiler.counters["cache_hit"],
                      "out": out.item(), "grad": x.grad.numpy().tolist()}))
""")


def test_disk_index_survives_a_new_process(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(_PROGRAM)
    env = dict(os.environ)

    def run():
        done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                              text=True, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    first, second = run(), run()
    assert (first["captures"], first["hit"]) == (1, 0)
    assert (second["captures"], second["hit"]) == (0, 1)
    x = torch.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, requires_grad=True)
    w = torch.ones((3, 4)) / 3
    y = (x * w + w).tanh()
    ref = (y * y).sum()
    ref.backward()
    for got in (first, second):
        np.testing.assert_allclose(got["out"], ref.item(), rtol=1e-5)
        np.testing.assert_allclose(got["grad"], x.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_config_is_part_of_the_key(captures, monkeypatch):
    f = chain(2)
    retrograd.compile(f)(*_inputs(retrograd))
    monkeypatch.setattr(config, "reuse_buffers", False)
    retrograd.compile(f)(*_inputs(retrograd))
    assert len(captures) == 2
    assert cache.INDEX  # both variants recorded


def through_bfloat16(x):
    return (x.to(retrograd.bfloat16).to(retrograd.float32) * x).sum()


def test_variant_with_unwritable_constants_is_indexed_in_memory_only(captures):
    x = retrograd.tensor(np.linspace(-1, 1, 5, dtype=np.float32), requires_grad=True)
    ref = torch.tensor(x.detach().numpy(), requires_grad=True)
    expected = (ref.to(torch.bfloat16).to(torch.float32) * ref).sum()
    for _ in range(2):
        out = retrograd.compile(through_bfloat16)(x)
        np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-6)
    assert len(captures) == 1  # the second compile found the variant in memory
    assert not os.path.exists(os.path.join(os.environ["RETROGRAD_CACHE_DIR"], "index"))
    retrograd.compiler.reset()
    out = retrograd.compile(through_bfloat16)(x)
    np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-6)
    assert len(captures) == 2
