"""Capture in one thread leaves other threads' eager work alone (NOTE [Per-thread dispatch
modes]): their ops are not recorded, their item()/bool() are not refused, Tensor is not patched."""

import threading

import numpy as np

import retrograd
from retrograd._compiler.api import counters
from retrograd._tensor import Tensor
from retrograd.fx.experimental.proxy_tensor import make_fx


def _run_while_inside(fn_holder, other):
    """Call fn_holder[0] in a thread that blocks inside the traced function until `other` (run
    in this thread) is done; returns the traced thread's result."""
    inside = threading.Event()
    release = threading.Event()
    result: dict = {}

    def pause():
        inside.set()
        assert release.wait(10)

    def worker():
        result["out"] = fn_holder[0](pause)

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(10)
    try:
        result["other"] = other()
    finally:
        release.set()
        t.join(10)
    return result


def _eager_work():
    originals = {name: Tensor.__dict__[name] for name in ("item", "__bool__", "tolist")}
    a = retrograd.arange(6.0).reshape(2, 3).requires_grad_()
    b = (a * 3).exp().sum()
    b.backward()
    # reading values into Python is fine in this thread, and Tensor is not patched
    flags = (bool(b > 0), b.item() > 0, len(a.grad.tolist()),
             all(Tensor.__dict__[n] is f for n, f in originals.items()))
    return b.item(), a.grad.numpy().copy(), flags


def test_capture_does_not_record_or_refuse_other_threads():
    def f(x, pause):
        y = x.sin()
        pause()  # the other thread runs eagerly now, while this one captures
        return (y * 2).sum()

    x = retrograd.randn(4, requires_grad=True)
    cf = retrograd.compile(f)
    res = _run_while_inside([lambda pause: cf(x, pause)], _eager_work)
    value, grad, flags = res["other"]
    expect = np.exp(np.arange(6.0).reshape(2, 3) * 3)
    np.testing.assert_allclose(value, expect.sum(), rtol=1e-5)
    np.testing.assert_allclose(grad, 3 * expect, rtol=1e-5)
    assert flags == (True, True, 2, True)
    out = res["out"]
    assert out.grad_fn.name() == "CompiledFunctionBackward"  # compiled, not run eagerly
    assert counters["compiles"] == 1
    np.testing.assert_allclose(out.item(), (x.detach().sin() * 2).sum().item(), rtol=1e-6)


def test_make_fx_records_only_its_own_thread():
    def f(x, pause):
        y = x * 2
        pause()
        return y + 1

    holder = [lambda pause: make_fx(lambda x: f(x, pause))(retrograd.ones(3))]
    res = _run_while_inside(holder, _eager_work)
    gm = res["out"]
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == ["aten.mul.Tensor", "aten.add.Tensor"]
    assert res["other"][2] == (True, True, 2, True)


def test_data_dependent_read_still_ends_capture_in_its_thread():
    def f(x, pause):
        pause()
        return x * 2 if x.sum() > 0 else x  # data-dependent: runs eagerly

    x = retrograd.ones(3, requires_grad=True)
    cf = retrograd.compile(f)
    res = _run_while_inside([lambda pause: cf(x, pause)], lambda: bool(retrograd.ones(1)))
    assert res["other"] is True
    assert res["out"].grad_fn.name() == "MulBackward0"
