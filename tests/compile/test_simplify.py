"""Joint-graph rewrites keep eager's values bit for bit (retrograd._compiler.simplify)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd import nn


@pytest.mark.parametrize("dtype", [retrograd.float32, retrograd.float64])
def test_gelu_erf_computed_once_and_equal_to_eager(dtype):
    rng = np.random.default_rng(0)
    x = retrograd.tensor(rng.standard_normal((6, 9)) * 3, dtype=dtype, requires_grad=True)
    w = retrograd.tensor(rng.standard_normal((9, 9)), dtype=dtype, requires_grad=True)

    def f(x, w):
        h = nn.functional.gelu(x @ w)
        return (h * h).sum(), h

    cf = retrograd.compile(f)
    cf(x, w)
    entry = next(iter(cf.variants.values()))
    assert "_gelu_from_erf" in entry.forward.source
    assert "aten_erf" in entry.forward.source and "aten_erf" not in entry.backward.source
    for _ in range(2):
        (lc, hc), (le, he) = cf(x, w), f(x, w)
        assert hc.dtype == he.dtype
        np.testing.assert_array_equal(hc.detach().numpy(), he.detach().numpy())
        np.testing.assert_array_equal(lc.detach().numpy(), le.detach().numpy())
        gc = retrograd.autograd.grad(lc, (x, w))
        ge = retrograd.autograd.grad(le, (x, w))
        for a, b in zip(gc, ge):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_gelu_without_backward_is_left_alone():
    x = retrograd.randn(4, 5)
    cf = retrograd.compile(lambda x: nn.functional.gelu(x))
    out = cf(x)
    entry = next(iter(cf.variants.values()))
    assert "aten_gelu" in entry.forward.source
    np.testing.assert_array_equal(out.numpy(), nn.functional.gelu(x).numpy())


def test_signed_zero_terms_of_forward_ad_are_dropped_bit_for_bit():
    # add and sub give an argument without a tangent the term x + -0.0, which is x itself
    from retrograd.func import jvp

    def f(x, v):
        return jvp(lambda a: (a.sin() * 0.9 + 0.1).tanh() - 0.5, (x,), (v,))

    # -0.0 tangents and a nan survive the dropped terms as they survive eager's
    x = retrograd.tensor([0.3, -1.2, 0.0, 2.0], dtype=retrograd.float32)
    v = retrograd.tensor([-0.0, 1.0, float("nan"), -2.0], dtype=retrograd.float32)
    cf = retrograd.compile(f, fullgraph=True)
    got, want = cf(x, v), f(x, v)
    source = next(iter(cf.variants.values())).forward.source
    assert "-0.0" not in source and ", 0.0" not in source
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
        np.testing.assert_array_equal(np.signbit(g.numpy()), np.signbit(w.numpy()))


def test_a_signed_zero_term_that_is_an_output_stays():
    # an output never shares its buffer with an input, so x + -0.0 returned stays a copy
    x = retrograd.tensor([1.0, -0.0])
    cf = retrograd.compile(lambda x: x + -0.0, fullgraph=True)
    y = cf(x)
    np.testing.assert_array_equal(np.signbit(y.numpy()), [False, True])
    assert not np.shares_memory(y.numpy(), x.numpy())


def test_a_signed_zero_term_over_a_view_of_another_output_stays():
    def f(x):
        a = x * 2.0
        return a, a[1:] + -0.0  # dropping the term would return a view of the first output

    x = retrograd.tensor([1.0, -0.0, 3.0])
    a, b = retrograd.compile(f, fullgraph=True)(x)
    assert not np.shares_memory(a.numpy(), b.numpy())
    np.testing.assert_array_equal(b.numpy(), [-0.0, 6.0])
