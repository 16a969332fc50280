"""Graphs are freed by reference counting alone (no reference cycles): seed 001's design."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np

import retrograd


def _step(w, b, x):
    h = (x.mm(w) + b).tanh()
    loss = (h * h).mean()
    loss.backward()
    return loss


def test_training_loop_memory_is_flat_without_cycle_collector():
    rng = np.random.default_rng(0)
    w = retrograd.tensor(rng.standard_normal((8, 8)), dtype=retrograd.float32,
                         requires_grad=True)
    b = retrograd.zeros(8, requires_grad=True)
    x = retrograd.tensor(rng.standard_normal((4, 8)), dtype=retrograd.float32)
    gc.collect()
    gc.disable()
    try:
        # warm up: op plans, generated code and the interpreter's and NumPy's object pools reach
        # their size (measured here: growth stops after about 2,000 steps)
        for _ in range(3000):
            _step(w, b, x)
        tracemalloc.start()
        _step(w, b, x)
        start, _ = tracemalloc.get_traced_memory()
        for _ in range(1000):
            _step(w, b, x)
        end, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        gc.enable()
    # 1000 steps would leak megabytes if any graph survived; allow small allocator noise
    assert end - start < 20_000, (start, end)


def test_intermediates_freed_after_backward_and_del():
    gc.disable()
    try:
        x = retrograd.ones(3, requires_grad=True)
        a = x.exp()
        b = a * x
        c = b.tanh()
        loss = c.sum()
        refs = [weakref.ref(t) for t in (a, b, c, loss)]
        nodes = [weakref.ref(t.grad_fn) for t in (a, b, c, loss)]
        loss.backward()
        del a, b, c, loss
        assert all(r() is None for r in refs)
        assert all(n() is None for n in nodes)
        assert x.grad is not None
    finally:
        gc.enable()


def test_graph_without_backward_is_freed_too():
    gc.disable()
    try:
        x = retrograd.ones(3, requires_grad=True)
        y = (x.exp() * x).sum()
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None
    finally:
        gc.enable()
