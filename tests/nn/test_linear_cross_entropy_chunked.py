"""The chunked path of F.linear_cross_entropy on its own: gradcheck of its first derivatives
(float64, class weights, ignored rows, chunk sizes 1, 3 and N), its peak memory against the
reference path's (tracemalloc sees NumPy's allocations), and retrograd.compile of a function
that calls it."""

from __future__ import annotations

import tracemalloc

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


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_peak_memory_below_the_reference_path(reduction):
    """A large vocabulary (C=8192 against in_features=64): the reference path holds (N, C)
    logits, softmax and their gradient; the chunked one (N, C) never, so its peak is the
    (C, in_features) weight gradient and a few (chunk, C) blocks."""
    chunked = _peak(retrograd.nn.LinearCrossEntropyOptions(), reduction)
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
