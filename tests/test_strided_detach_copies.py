"""torch.as_strided_copy and torch.detach_copy against torch 2.13."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

LIBS = (torch, retrograd)


def _each(fn):
    return [fn(lib) for lib in LIBS]


@pytest.mark.parametrize("geometry", [((2, 2), (1, 2), 1), ((3, 3), (1, 1), None),
                                      ((4,), (3,), 0), ((2, 3), (4, 1), 2)])
def test_as_strided_copy(geometry):
    def run(lib):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        out = lib.as_strided_copy(x, *geometry)
        (out * lib.tensor(np.arange(out.numel(), dtype=np.float64)).reshape(out.shape)).sum() \
            .backward()
        return (out.detach().numpy(), out.stride(), out.is_contiguous(), out.grad_fn.name(),
                x.grad.numpy())

    t, r = _each(run)
    np.testing.assert_array_equal(r[0], t[0])
    assert r[1:4] == t[1:4]
    np.testing.assert_array_equal(r[4], t[4])


def test_as_strided_copy_of_a_view_and_out():
    def run(lib):
        v = lib.tensor(np.arange(12.0)).view(3, 4)[1:]
        out = lib.empty(2, dtype=lib.float64)
        lib.as_strided_copy(v, (2,), (2,), 1, out=out)
        return (lib.as_strided_copy(v, (2,), (1,)).tolist(),
                lib.as_strided_copy(v, (2,), (1,), 0).tolist(), out.tolist())

    t, r = _each(run)
    assert r == t


@pytest.mark.parametrize("geometry", [((2, 2), (1,), 1), ((20, 2), (1, 2), 1)])
def test_as_strided_copy_errors(geometry):
    messages = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as err:
            lib.as_strided_copy(lib.zeros(3, 4), *geometry)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_detach_copy():
    def run(lib):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        d = lib.detach_copy(x)
        shared = d.data_ptr() == x.data_ptr()
        with pytest.raises(RuntimeError) as err:
            d.sum().backward()
        return (d.detach().numpy().tolist(), d.requires_grad, d.grad_fn.name(), shared,
                str(err.value), lib.detach_copy(lib.ones(2)).requires_grad)

    t, r = _each(run)
    assert r == t


def test_detach_copy_out_under_autograd_raises():
    """README, deliberate differences: torch writes the out tensor and marks it as requiring
    grad; retrograd refuses as for any op with out= under autograd."""
    x = retrograd.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support "
                       "automatic differentiation"):
        retrograd.detach_copy(x, out=retrograd.empty(2))
    out = retrograd.empty(2)
    retrograd.detach_copy(x.detach(), out=out)
    assert out.tolist() == [1.0, 1.0] and not out.requires_grad
