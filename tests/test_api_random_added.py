"""torch.poisson and torch.binomial: retrograd's generator, sample statistics, torch's dtypes,
nodes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def same_error(build, exc=Exception):
    with pytest.raises(exc) as t_err:
        build(torch)
    with pytest.raises(exc) as o_err:
        build(retrograd)
    assert type(o_err.value) is type(t_err.value)
    assert str(o_err.value) == str(t_err.value).replace("torch.", "retrograd.")


@pytest.mark.parametrize("rate", [0.5, 3.0, 40.0])
def test_poisson_statistics(rate):
    retrograd.manual_seed(1)
    x = retrograd.poisson(retrograd.full((20000,), rate)).numpy()
    assert x.dtype == np.float32 and (x == np.round(x)).all() and (x >= 0).all()
    # mean and variance both equal the rate: within 5 standard errors
    assert abs(x.mean() - rate) < 5 * np.sqrt(rate / x.size)
    assert abs(x.var() - rate) < 5 * rate * np.sqrt(2.0 / x.size) + 5 * rate / np.sqrt(x.size)


@pytest.mark.parametrize("n, p", [(10.0, 0.3), (50.0, 0.9), (1.0, 0.5)])
def test_binomial_statistics(n, p):
    retrograd.manual_seed(2)
    size = 20000
    x = retrograd.binomial(retrograd.full((size,), n), retrograd.full((size,), p)).numpy()
    assert x.dtype == np.float32 and ((0 <= x) & (x <= n)).all()
    var = n * p * (1 - p)
    assert abs(x.mean() - n * p) < 5 * np.sqrt(var / size)
    assert abs(x.var() - var) < 5 * var * np.sqrt(2.0 / size) + 5 * var / np.sqrt(size)


def test_generators_repeat_and_differ():
    g = retrograd.Generator().manual_seed(5)
    a = retrograd.poisson(retrograd.full((50,), 4.0), generator=g)
    g.manual_seed(5)
    b = retrograd.poisson(retrograd.full((50,), 4.0), generator=g)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    retrograd.manual_seed(5)
    c = retrograd.binomial(retrograd.full((50,), 9.0), retrograd.full((50,), 0.5))
    retrograd.manual_seed(5)
    d = retrograd.binomial(retrograd.full((50,), 9.0), retrograd.full((50,), 0.5))
    np.testing.assert_array_equal(c.numpy(), d.numpy())


def test_edges_dtypes_and_nodes():
    for lib in (torch, retrograd):
        out = lib.binomial(lib.tensor([10.0, 10.0, 5.0, 0.0]), lib.tensor([1.5, -0.5, 1.0, 0.5]))
        np.testing.assert_array_equal(out.numpy(), [10.0, 0.0, 5.0, 0.0])
        assert lib.poisson(lib.zeros(3, dtype=lib.float64)).dtype == lib.float64
        assert lib.binomial(lib.ones(2), lib.ones(1) / 2).shape == (2,)
        rates = lib.full((3,), 2.0, requires_grad=True)
        drawn = lib.poisson(rates)
        assert drawn.grad_fn.name() == "PoissonBackward0"
        drawn.sum().backward()
        assert rates.grad.abs().sum().item() == 0
        count = lib.full((2,), 4.0, requires_grad=True)
        b = lib.binomial(count, lib.full((2,), 0.5))
        assert b.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
            b.sum().backward()


def test_errors():
    same_error(lambda lib: lib.poisson(lib.tensor([1, 2])), NotImplementedError)
    same_error(lambda lib: lib.poisson(lib.tensor([-1.0])), RuntimeError)
    same_error(lambda lib: lib.binomial(lib.tensor([10, 20]), lib.tensor([0.5, 0.2])),
               ValueError)
    same_error(lambda lib: lib.binomial(lib.tensor([10.0]), lib.tensor([0.5]).double()),
               RuntimeError)


def test_native_channel_shuffle():
    data = np.arange(24.0).reshape(2, 4, 3)
    outs = []
    for lib in (torch, retrograd):
        x = lib.tensor(data, requires_grad=True)
        y = lib.native_channel_shuffle(x.transpose(0, 2).transpose(0, 2), 2)
        assert y.grad_fn.name() == "torch::autograd::NotImplemented"
        assert lib.nn.functional.native_channel_shuffle(x, 2).is_contiguous()
        with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle"):
            y.sum().backward()
        outs.append(y.detach().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    same_error(lambda lib: lib.native_channel_shuffle(lib.rand(2, 4), 2), RuntimeError)
    same_error(lambda lib: lib.native_channel_shuffle(lib.rand(2, 4, 3), 0), RuntimeError)
    same_error(lambda lib: lib.native_channel_shuffle(lib.rand(2, 4, 3), 3), RuntimeError)
