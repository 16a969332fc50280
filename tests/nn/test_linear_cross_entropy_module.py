"""nn.LinearCrossEntropyLoss against torch's: constructor checks, the `linear` submodule and
its state_dict keys, repr, forward and gradients with the same weights loaded into both (with
and without options, K-dimensional out_features included), and a few Adam steps."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.parity.harness import assert_same, error_of

torch = pytest.importorskip("torch")

IN, C = 6, 9


def _pair(lib, state=None, **kw):
    if "weight" in kw and kw["weight"] is not None:
        kw["weight"] = lib.from_numpy(np.array(kw["weight"], dtype=np.float32))
    if isinstance(kw.get("options"), dict):
        kw["options"] = lib.nn.LinearCrossEntropyOptions(**kw["options"])
    m = lib.nn.LinearCrossEntropyLoss(IN, C, **kw)
    if state is not None:
        # the class weight buffer (when given) comes from the constructor
        m.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in state.items()}, strict=False)
    return m


def _state(bias, out_features=(), seed=0):
    rng = np.random.default_rng(seed)
    rows = C * int(np.prod(out_features))
    state = {"linear.weight": rng.standard_normal((rows, IN)).astype(np.float32)}
    if bias:
        state["linear.bias"] = rng.standard_normal(rows).astype(np.float32)
    return state


@pytest.mark.parametrize("kw", [
    dict(), dict(bias=True), dict(out_features=(2, 3), bias=True), dict(reduction="sum"),
    dict(ignore_index=-1, label_smoothing=0.25, weight=[1.0] * C),
    dict(options=dict(batch_chunk_size=4)),
])
def test_structure_and_repr(kw):
    ours, theirs = _pair(retrograd, **dict(kw)), _pair(torch, **dict(kw))
    assert_same(repr(ours), repr(theirs))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert ours.num_classes == C and ours.out_features == kw.get("out_features", ())
    assert (ours.options is None) == ("options" not in kw)


@pytest.mark.parametrize("kw", [
    dict(weight=[1.0] * (C - 1)), dict(label_smoothing=-0.1), dict(label_smoothing=1.5),
])
def test_constructor_errors(kw):
    assert_same(error_of(_pair, retrograd, **dict(kw)), error_of(_pair, torch, **dict(kw)))


def test_dtype_argument():
    m = retrograd.nn.LinearCrossEntropyLoss(IN, C, bias=True, dtype=retrograd.float64)
    assert m.linear.weight.dtype == retrograd.float64 and m.linear.bias.dtype == retrograd.float64


CASES = [
    dict(), dict(bias=True), dict(bias=True, options=dict()),
    dict(bias=True, options=dict(batch_chunk_size=3), reduction="sum"),
    dict(options=dict(batch_chunk_size=2), reduction="none", weight=list(np.linspace(.5, 2, C))),
    dict(options=dict(allow_retain_graph=True), ignore_index=4),
    dict(out_features=(2,), bias=True), dict(label_smoothing=0.1, weight=[2.0] * C),
]


def _forward_backward(lib, case, x, t, state):
    m = _pair(lib, state, **dict(case))
    xt = lib.from_numpy(x.copy()).requires_grad_()
    loss = m(xt, lib.from_numpy(t.copy()))
    loss.sum().backward()
    return {"loss": loss, "node": type(loss.grad_fn).__name__, "x": xt.grad,
            "grads": {n: p.grad for n, p in m.named_parameters()}}


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_forward_and_gradients(case):
    out_features = case.get("out_features", ())
    state = _state(case.get("bias", False), out_features)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((11, IN)).astype(np.float32)
    t = rng.integers(0, C, (11, *out_features))
    if "ignore_index" in case:
        t[[0, 5]] = case["ignore_index"]
    assert_same(_forward_backward(retrograd, case, x, t, state),
                _forward_backward(torch, case, x, t, state), rtol=1e-5, atol=1e-6)


def test_unbatched_input():
    state = _state(True)
    x = np.random.default_rng(2).standard_normal(IN).astype(np.float32)
    t = np.array(3)
    for case in (dict(bias=True), dict(bias=True, options=dict())):
        assert_same(_forward_backward(retrograd, case, x, t, state),
                    _forward_backward(torch, case, x, t, state), rtol=1e-5, atol=1e-6)


def _adam(lib, case, state, steps=4):
    m = _pair(lib, state, **dict(case))
    opt = lib.optim.Adam(m.parameters(), lr=0.05)
    rng = np.random.default_rng(3)
    losses = []
    for _ in range(steps):
        x = lib.from_numpy(rng.standard_normal((16, IN)).astype(np.float32))
        t = lib.from_numpy(rng.integers(0, C, 16))
        opt.zero_grad()
        loss = m(x, t)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses, {k: v for k, v in m.state_dict().items()}


@pytest.mark.parametrize("case", [dict(bias=True), dict(bias=True, options=dict(
    batch_chunk_size=5))], ids=["reference", "chunked"])
def test_adam_steps(case):
    state = _state(True, seed=4)
    assert_same(_adam(retrograd, case, state), _adam(torch, case, state), rtol=1e-4, atol=1e-5)
