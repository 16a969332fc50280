"""The chunked path of F.linear_cross_entropy on its own: gradcheck of its first derivatives
(float64, class weights, ignored rows, chunk sizes 1, 3 and N), its peak memory against the
reference path's (tracemalloc sees NumPy's allocations), and retrograd.compile of a function
that calls it."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck

F = retrograd.nn.functional
N, IN, C = 7, 3, 5


def _inputs(seed=0, ignore=-100):
    rng = np.random.default_rng(seed)
    x = retrograd.from_numpy(rng.standard_normal((N, IN))).requires_grad_()
    w = retrograd.from_numpy(rng.standard_normal((C, IN))).requires_grad_()
    b = retrograd.from_numpy(rng.standard_normal(C)).requires_grad_()
    t = rng.integers(0, C, N)
    t[[1, 5]] = ignore
    cw = retrograd.from_numpy(rng.random(C) + 0.5)
    return x, w, b, retrograd.from_numpy(t), cw


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk", [1, 3, N])
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("class_weight", [False, True])
def test_gradcheck(reduction, chunk, ignore_index, class_weight):
    x, w, b, t, cw = _inputs(ignore=ignore_index)
    # gradcheck runs backward more than once on one graph: mean/sum need allow_retain_graph
    options = retrograd.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk,
                                                     allow_retain_graph=True)

    def f(x, w, b):
        return F.linear_cross_entropy(x, w, t, linear_bias=b, weight=cw if class_weight else None,
                                      reduction=reduction, ignore_index=ignore_index,
                                      options=options)

    assert type(f(x, w, b).grad_fn).__name__.startswith("GeneratedBackwardFor_torch_nn_")
    assert gradcheck(f, (x, w, b))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradcheck_unbatched(reduction):
    x, w, b, t, cw = _inputs()
    options = retrograd.nn.LinearCrossEntropyOptions(allow_retain_graph=True)
    assert gradcheck(lambda x, w, b: F.linear_cross_entropy(
        x, w, t[0], linear_bias=b, weight=cw, reduction=reduction, options=options),
        (x[0].detach().requires_grad_(), w, b))


def _peak(options, reduction):
    rng = np.random.default_rng(0)
    n, f, c = 512, 64, 8192
    x = retrograd.from_numpy(rng.standard_normal((n, f)).astype(np.float32)).requires_grad_()
    w = retrograd.from_numpy(
        (rng.standard_normal((c, f)) * 0.1).astype(np.float32)).requires_grad_()
    t = retrograd.from_numpy(rng.integers(0, c, n))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        loss = F.linear_cross_entropy(x, w, t, reduction=reduction, options=options)
        loss.sum().backward()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, loss.detach(), x.grad, w.grad


@pytest.mark.parametrize("reduction,chunk", [("mean", None), ("sum", 64), ("none", 64)])
def test_peak_memory_below_the_reference_path(reduction, chunk):
    """A large vocabulary (C=8192 against in_features=64): the reference path holds (N, C)
    logits, softmax and their gradient; the chunked one (N, C) never, so its peak is the
    (C, in_features) weight gradient and a few (chunk, C) blocks. (chunk None: the "auto"
    size, 2 rows here.)"""
    chunked = _peak(retrograd.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk), reduction)
    reference = _peak(None, reduction)
    assert chunked[0] < reference[0] / 2, (chunked[0], reference[0])
    for a, b in zip(chunked[1:], reference[1:]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-4, atol=1e-6)


def _compiled_run(fn, reduction, seed=0):
    rng = np.random.default_rng(seed)
    x = retrograd.from_numpy(rng.standard_normal((N, IN)).astype(np.float32)).requires_grad_()
    w = retrograd.from_numpy(rng.standard_normal((C, IN)).astype(np.float32)).requires_grad_()
    b = retrograd.from_numpy(rng.standard_normal(C).astype(np.float32)).requires_grad_()
    t = rng.integers(0, C, N)
    t[2] = -100
    loss = fn(x, w, b, retrograd.from_numpy(t), reduction)
    up = retrograd.from_numpy(rng.standard_normal(tuple(loss.shape)).astype(np.float32))
    loss.backward(up, retain_graph=True)
    first = [loss.detach(), x.grad.clone(), w.grad.clone(), b.grad.clone()]
    return first, loss, up, (x, w, b)


def _lce(x, w, b, t, reduction):
    options = retrograd.nn.LinearCrossEntropyOptions(batch_chunk_size=3)
    return F.linear_cross_entropy(x, w, t, linear_bias=b, reduction=reduction,
                                  options=options) * 2.0


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_compile(reduction):
    """Compiled, the chunked Function's forward and backward are captured into the graph: the
    same values and gradients as eager. The compiled backward is a pure function of what the
    forward saved, so a second backward (retain_graph=True) gives the same gradients again
    (as torch, which forces allow_retain_graph=True under torch.compile), where eager mean/sum
    raise."""
    compiled = retrograd.compile(_lce)
    for seed in (0, 1):  # the second call runs the compiled variant
        eager, *_ = _compiled_run(_lce, reduction, seed)
        got, loss, up, leaves = _compiled_run(compiled, reduction, seed)
        assert type(loss.grad_fn).__name__ == "CompiledFunctionBackward"
        for a, b in zip(got, eager):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
        loss.backward(up)
        for leaf, g in zip(leaves, got[1:]):
            np.testing.assert_allclose(leaf.grad.numpy(), 2 * g.numpy(), rtol=1e-5, atol=1e-6)


def _sum_lce(x, w, t):
    options = retrograd.nn.LinearCrossEntropyOptions(batch_chunk_size=3)
    return F.linear_cross_entropy(x, w, t, reduction="sum", options=options)


def test_compile_guards_on_requires_grad_and_grad_mode():
    """Each variant computes only the gradients its call needs, as eager does: a call with
    other requires_grad flags or grad mode gets its own variant with eager's results."""
    compiled = retrograd.compile(_sum_lce)
    for needs, grad_mode in [((True, True), True), ((False, True), True), ((True, False), True),
                             ((True, True), False), ((True, True), True)]:
        results = []
        for fn in (_sum_lce, compiled):
            rng = np.random.default_rng(3)
            x = retrograd.from_numpy(rng.standard_normal((N, IN))).requires_grad_(needs[0])
            w = retrograd.from_numpy(rng.standard_normal((C, IN))).requires_grad_(needs[1])
            t = retrograd.from_numpy(rng.integers(0, C, N))
            with retrograd.set_grad_enabled(grad_mode):
                loss = fn(x, w, t)
            assert loss.requires_grad == (grad_mode and any(needs))
            if loss.requires_grad:
                loss.backward()
            results.append([loss.detach()] + [v.grad for v in (x, w) if v.grad is not None])
        assert len(results[0]) == len(results[1])
        for a, b in zip(*results):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_compiled_module():
    options = retrograd.nn.LinearCrossEntropyOptions()
    eager = retrograd.nn.LinearCrossEntropyLoss(IN, C, bias=True, options=options)
    compiled = retrograd.nn.LinearCrossEntropyLoss(IN, C, bias=True, options=options)
    compiled.load_state_dict(eager.state_dict())
    compiled.compile()
    x, t = retrograd.randn(6, IN), retrograd.randint(0, C, (6,))
    for _ in range(2):
        eager.zero_grad()
        compiled.zero_grad()
        a, b = eager(x, t), compiled(x, t)
        a.backward()
        b.backward()
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
        for p, q in zip(eager.parameters(), compiled.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("allow", [False, True])
def test_compile_forces_allow_retain_graph_with_torchs_warning(allow):
    options = retrograd.nn.LinearCrossEntropyOptions(batch_chunk_size=3,
                                                     allow_retain_graph=allow)

    def f(x, w, t):
        return F.linear_cross_entropy(x, w, t, options=options)

    rng = np.random.default_rng(4)
    x = retrograd.from_numpy(rng.standard_normal((N, IN))).requires_grad_()
    w = retrograd.from_numpy(rng.standard_normal((C, IN))).requires_grad_()
    t = retrograd.from_numpy(rng.integers(0, C, N))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        retrograd.compile(f)(x, w, t).backward()
        f(x, w, t)  # eager: no warning
    forced = [w for w in caught if "forcing allow_retain_graph=True" in str(w.message)]
    assert len(forced) == (0 if allow else 1)
