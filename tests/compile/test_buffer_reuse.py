"""Generated code writes results into dead buffers (out=, config.reuse_buffers): what it hands
back never shares memory wrongly. Outputs do not share memory with each other, with the inputs
or with a later call's buffers; inputs are never written; values and gradients equal eager's
exactly (the in-place NumPy sequences compute what the kernels compute)."""

from __future__ import annotations

import itertools

import numpy as np

import retrograd
from retrograd import nn

F = nn.functional


def _arrays(ts) -> list:
    return [t.detach()._data for t in ts if t is not None]


def _no_sharing(arrays: list) -> None:
    for a, b in itertools.combinations(arrays, 2):
        assert not np.shares_memory(a, b)


def _pointwise(x, w):
    a = (x * w + w).tanh()
    b = (a * w + x).tanh()
    c = (b * a - w).exp()
    d = (c * b).tanh()
    return a, d, (d * c + a).tanh(), c.relu()


def test_outputs_never_share_buffers_and_inputs_stay_unchanged():
    rng = np.random.default_rng(0)
    x = retrograd.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    w = retrograd.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    x0, w0 = x.detach().numpy().copy(), w.detach().numpy().copy()
    cf = retrograd.compile(_pointwise)
    first = cf(x, w)
    kept = [o.detach().numpy().copy() for o in first]
    entry = next(iter(cf.variants.values()))
    assert "out=" in entry.forward.source and "out=" in entry.backward.source
    second = cf(x, w)
    expected = _pointwise(x, w)
    for got, want, old, before in zip(second, expected, first, kept):
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        # the second call wrote nothing the first call returned
        np.testing.assert_array_equal(old.detach().numpy(), before)
    _no_sharing(_arrays(first) + _arrays(second) + [x._data, w._data])
    np.testing.assert_array_equal(x.detach().numpy(), x0)
    np.testing.assert_array_equal(w.detach().numpy(), w0)
    # gradients: fresh arrays, equal to eager's, inputs still unchanged
    gc = retrograd.autograd.grad(sum(o.sum() for o in second), (x, w))
    ge = retrograd.autograd.grad(sum(o.sum() for o in expected), (x, w))
    for a, b in zip(gc, ge):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    _no_sharing(_arrays(gc) + _arrays(second) + [x._data, w._data])
    np.testing.assert_array_equal(x.detach().numpy(), x0)
    np.testing.assert_array_equal(w.detach().numpy(), w0)


def test_gradients_accumulated_across_steps_stay_distinct():
    # .grad holds the backward's output across calls: a later call must not write into it
    rng = np.random.default_rng(1)
    x = retrograd.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    w = retrograd.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    cf = retrograd.compile(lambda x, w: sum(o.sum() for o in _pointwise(x, w)))
    cf(x, w).backward()
    g1 = w.grad
    g1_copy = g1.numpy().copy()
    w.grad = None
    cf(x * 1.5, w).backward()
    np.testing.assert_array_equal(g1.numpy(), g1_copy)
    assert not np.shares_memory(g1._data, w.grad._data)


def _mlp(x, w1, b1, w2, b2, w3, b3):
    h = F.relu(F.linear(x, w1, b1))
    h = F.linear(h, w2, b2).tanh()
    return F.linear(h, w3, b3).sum(), h


def test_matmul_relu_tanh_backward_in_place_equal_eager():
    rng = np.random.default_rng(2)
    shapes = [(5, 8), (6, 8), (6,), (7, 6), (7,), (3, 7), (3,)]
    ts = [retrograd.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
          for s in shapes]
    ts[0].requires_grad_(False)
    copies = [t.detach().numpy().copy() for t in ts]
    cf = retrograd.compile(_mlp)
    cf(*ts)
    entry = next(iter(cf.variants.values()))
    assert "_matmul(" in entry.forward.source and "_matmul(" in entry.backward.source
    for _ in range(2):
        out_c, h_c = cf(*ts)
        out_e, h_e = _mlp(*ts)
        np.testing.assert_array_equal(out_c.detach().numpy(), out_e.detach().numpy())
        np.testing.assert_array_equal(h_c.detach().numpy(), h_e.detach().numpy())
        gc = retrograd.autograd.grad(out_c + h_c.sum(), ts[1:])
        ge = retrograd.autograd.grad(out_e + h_e.sum(), ts[1:])
        for a, b in zip(gc, ge):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        _no_sharing(_arrays(gc) + [h_c._data] + [t._data for t in ts])
    for t, c in zip(ts, copies):
        np.testing.assert_array_equal(t.detach().numpy(), c)


def test_expanded_matmul_operand_uses_the_same_product_as_eager():
    # sum()'s gradient is an expanded tensor (every row the same): both paths call the kernel,
    # which multiplies one row and repeats it, so the products are equal bit for bit
    rng = np.random.default_rng(3)
    x = retrograd.tensor(rng.standard_normal((4, 5)).astype(np.float32), requires_grad=True)
    w = retrograd.tensor(rng.standard_normal((3, 5)).astype(np.float32), requires_grad=True)

    def f(x, w):
        return F.linear(x, w).sum()

    cf = retrograd.compile(f)
    cf(x, w)
    source = next(iter(cf.variants.values())).backward.source
    assert "aten_mm(" in source and "_contig(" not in source
    gc = retrograd.autograd.grad(cf(x, w), (x, w))
    ge = retrograd.autograd.grad(f(x, w), (x, w))
    for a, b in zip(gc, ge):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
