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
