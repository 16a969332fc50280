"""Factories inside a compiled function (NOTE [Factories in compiled graphs]): each call makes
fresh arrays as eager does, laid out as eager's, written in place freely, and the variant is
still written to the disk cache."""

from __future__ import annotations

import os

import numpy as np
import pytest

import retrograd
from retrograd.compiler import counters


def _accumulate(x):
    # a fresh buffer written in place: a call must not see the previous call's writes
    acc = retrograd.zeros(x.shape)
    acc += x
    acc.mul_(retrograd.full((1,), 3.0))
    return acc + retrograd.ones_like(x) + retrograd.empty_like(x).fill_(0.5)


def test_fresh_buffers_at_every_call():
    x = retrograd.arange(6.0).reshape(2, 3).requires_grad_()
    cf = retrograd.compile(_accumulate, fullgraph=True)
    first = cf(x)
    second = cf(x)
    expected = _accumulate(x)
    for out in (first, second):
        np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    assert first.detach().numpy() is not second.detach().numpy()
    g, = retrograd.autograd.grad(cf(x).sum(), x)
    np.testing.assert_array_equal(g.numpy(), np.full((2, 3), 3.0, np.float32))
    assert counters["compiles"] == 1
    assert all(getattr(v, "eager_reason", None) is None for v in cf.variants.values())


@pytest.mark.parametrize("make", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_factories_keep_the_input_layout(make):
    def f(x):
        t = x.t()
        fresh = {"zeros_like": lambda: retrograd.zeros_like(t),
                 "ones_like": lambda: retrograd.ones_like(t),
                 "empty_like": lambda: retrograd.empty_like(t).fill_(1.0),
                 "full_like": lambda: retrograd.full_like(t, 7.0)}[make]()
        # view(-1) of the transposed result works only if it is laid out as t is
        return x * fresh.t().view(-1).reshape(x.shape)

    x = retrograd.randn(3, 4, requires_grad=True)
    cf = retrograd.compile(f, fullgraph=True)
    np.testing.assert_array_equal(cf(x).detach().numpy(), f(x).detach().numpy())
    assert all(getattr(v, "eager_reason", None) is None for v in cf.variants.values())
    assert retrograd.empty_like(x.t()).stride() == x.t().stride()


def test_factory_errors_and_out_unchanged():
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8"):
        retrograd.full_like(retrograd.zeros(2, dtype=retrograd.uint8), 300)
    out = retrograd.empty(2)
    assert retrograd.zeros(2, out=out) is out
    assert retrograd.ones(2, requires_grad=True).is_leaf


def test_variant_with_factories_is_written_to_disk():
    x = retrograd.randn(2, 3, requires_grad=True)
    expected = _accumulate(x).detach().numpy()
    retrograd.compile(_accumulate)(x)
    index_dir = os.path.join(os.environ["RETROGRAD_CACHE_DIR"], "index")
    assert len(os.listdir(index_dir)) == 1
    retrograd.compiler.reset()
    out = retrograd.compile(_accumulate)(x)
    assert counters["cache_hit"] == 1
    np.testing.assert_array_equal(out.detach().numpy(), expected)
