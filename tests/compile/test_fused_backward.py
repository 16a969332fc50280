"""A compiled backward records the fused normalization backward ops eager's backward runs
(native_layer_norm_backward, ...: the compiled backward is never differentiated again), so it
reads the saved mean and rstd instead of recomputing them, and its gradients equal eager's bit
for bit. A double backward inside the compiled function still differentiates the composite."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd import nn

F = nn.functional


def _params(seed: int, size: int, dtype) -> list:
    rng = np.random.default_rng(seed)
    return [retrograd.tensor(rng.standard_normal(size) + 1.0, dtype=dtype, requires_grad=True)
            for _ in range(2)]


CASES = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b),
                   (4, 5, 7), 7, "aten_native_layer_norm_backward"),
    "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                   (6, 5, 3), 5, "aten_native_batch_norm_backward"),
    "group_norm": (lambda x, w, b: F.group_norm(x, 5, w, b), (3, 5, 4), 5,
                   "aten_native_group_norm_backward"),
}


@pytest.mark.parametrize("dtype", [retrograd.float32, retrograd.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_backward_equals_eager(name, dtype):
    fn, shape, size, kernel = CASES[name]
    w, b = _params(0, size, dtype)

    def f(x, w, b):
        return (fn(x, w, b).tanh() * 3).sum()

    cf = retrograd.compile(f, fullgraph=True)
    for seed in range(2):
        x2 = retrograd.tensor(np.random.default_rng(seed + 5).standard_normal(shape),
                              dtype=dtype, requires_grad=True)
        gc = retrograd.autograd.grad(cf(x2, w, b), (x2, w, b))
        ge = retrograd.autograd.grad(f(x2, w, b), (x2, w, b))
        for a, e in zip(gc, ge):
            np.testing.assert_array_equal(a.numpy(), e.numpy())
    entry = next(iter(cf.variants.values()))
    if kernel in entry.backward.source:
        return
    pytest.fail(f"{kernel} not in the compiled backward")


def test_double_backward_inside_compiled_function_uses_the_composite():
    w, b = _params(1, 6, retrograd.float64)
    x = retrograd.tensor(np.random.default_rng(2).standard_normal((3, 6)), requires_grad=True)

    def f(x, w, b):
        y = F.layer_norm(x, (6,), w, b)
        (g,) = retrograd.autograd.grad((y ** 3).sum(), x, create_graph=True)
        return (g * g).sum()

    cf = retrograd.compile(f)
    gc = retrograd.autograd.grad(cf(x, w, b), (x, w, b))
    ge = retrograd.autograd.grad(f(x, w, b), (x, w, b))
    for a, e in zip(gc, ge):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)
    assert any(float(np.abs(a.numpy()).max()) > 0 for a in gc)


def test_attention_backward_is_the_fused_op_and_equals_eager():
    rng = np.random.default_rng(3)
    q, k, v = (retrograd.tensor(rng.standard_normal((2, 2, 4, 8)), requires_grad=True)
               for _ in range(3))

    def g(q, k, v):
        return (F.scaled_dot_product_attention(q, k, v, is_causal=True) ** 2).sum()

    cg = retrograd.compile(g, fullgraph=True)
    gc = retrograd.autograd.grad(cg(q, k, v), (q, k, v))
    ge = retrograd.autograd.grad(g(q, k, v), (q, k, v))
    for a, e in zip(gc, ge):
        np.testing.assert_array_equal(a.numpy(), e.numpy())
    entry = next(iter(cg.variants.values()))
    assert "attention_for_cpu_backward" in entry.backward.source
