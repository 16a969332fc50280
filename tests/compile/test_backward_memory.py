"""The compiled backward frees each saved value at its last use, as eager frees a node's saved
tensors after it runs; with retain_graph it keeps them for the next backward."""

import tracemalloc

import numpy as np
import pytest

import retrograd


def chain(x, *ws):
    h = x
    for w in ws:
        h = (h @ w).tanh()
    return h.sum()


def _inputs():
    rng = np.random.default_rng(0)
    ws = [retrograd.tensor(rng.standard_normal((64, 64)).astype(np.float32) / 8)
          for _ in range(8)]
    x = retrograd.tensor(rng.standard_normal((64, 64)).astype(np.float32), requires_grad=True)
    return x, ws


def _peak(fn, x, ws) -> int:
    fn(x, *ws).backward()
    x.grad = None
    tracemalloc.start()
    fn(x, *ws).backward()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_compiled_peak_is_eagers():
    x, ws = _inputs()
    eager = _peak(chain, x, ws)
    compiled = _peak(retrograd.compile(chain), x, ws)
    assert compiled <= eager * 1.15  # the 8 saved activations alone are eager's peak


def test_retain_graph_keeps_saved_values():
    x, ws = _inputs()
    out = retrograd.compile(chain)(x, *ws)
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    out.backward(retain_graph=True)
    first = x.grad.clone()
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy(), rtol=1e-5)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        out.backward()
