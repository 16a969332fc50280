"""Window functions (torch.*_window and torch.signal.windows) against torch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

TOP = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
SIGNAL = ["cosine", "exponential", "gaussian", "general_hamming", "hamming", "hann",
          "blackman", "bartlett", "kaiser", "nuttall"]


def same_error(build, exc=Exception):
    with pytest.raises(exc) as t_err:
        build(torch)
    with pytest.raises(exc) as o_err:
        build(retrograd)
    assert type(o_err.value) is type(t_err.value)
    assert str(o_err.value) == str(t_err.value).replace("torch.", "retrograd.")


def close(o, t, atol=1e-6):
    assert o.dtype.name == str(t.dtype).replace("torch.", "")
    assert tuple(o.shape) == tuple(t.shape)
    assert o.requires_grad == t.requires_grad
    assert (o.grad_fn and o.grad_fn.name()) == (t.grad_fn and t.grad_fn.name())
    np.testing.assert_allclose(o.detach().float().numpy(), t.detach().float().numpy(),
                               atol=atol, rtol=1e-5)


@pytest.mark.parametrize("name", TOP)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 33])
@pytest.mark.parametrize("periodic", [True, False])
def test_top_level_windows(name, n, periodic):
    close(getattr(retrograd, name)(n, periodic), getattr(torch, name)(n, periodic))
    close(getattr(retrograd, name)(n), getattr(torch, name)(n))


@pytest.mark.parametrize("name", TOP)
@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_top_level_window_dtypes_and_grad(name, dtype):
    o = getattr(retrograd, name)(7, dtype=getattr(retrograd, dtype), requires_grad=True)
    t = getattr(torch, name)(7, dtype=getattr(torch, dtype), requires_grad=True)
    close(o, t, atol=1e-2 if dtype != "float64" else 1e-12)
    assert o.is_leaf


def test_window_parameters():
    close(retrograd.hamming_window(9, False, 0.5), torch.hamming_window(9, False, 0.5))
    close(retrograd.hamming_window(9, True, 0.6, 0.3), torch.hamming_window(9, True, 0.6, 0.3))
    close(retrograd.kaiser_window(9, False, 3.0), torch.kaiser_window(9, False, 3.0))
    close(retrograd.kaiser_window(10, True, 0.0), torch.kaiser_window(10, True, 0.0))
    retrograd.set_default_dtype(retrograd.float64)
    try:
        assert retrograd.hann_window(4).dtype is retrograd.float64
    finally:
        retrograd.set_default_dtype(retrograd.float32)


@pytest.mark.parametrize("name", TOP)
def test_top_level_window_errors(name):
    same_error(lambda lib: getattr(lib, name)(5, dtype=lib.int64), RuntimeError)
    same_error(lambda lib: getattr(lib, name)(-1), RuntimeError)
    same_error(lambda lib: getattr(lib, name)(5.0), TypeError)


@pytest.mark.parametrize("name", SIGNAL)
@pytest.mark.parametrize("M", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("sym", [True, False])
def test_signal_windows(name, M, sym):
    for kw in ({}, {"requires_grad": True}, {"dtype": "float64"}):
        def call(lib, kw=kw):
            args = dict(kw)
            if "dtype" in args:
                args["dtype"] = getattr(lib, args["dtype"])
            return getattr(lib.signal.windows, name)(M, sym=sym, **args)

        close(call(retrograd), call(torch))


def test_signal_window_parameters():
    W, TW = retrograd.signal.windows, torch.signal.windows
    close(W.gaussian(7, std=2.5), TW.gaussian(7, std=2.5))
    close(W.exponential(7, tau=3.0), TW.exponential(7, tau=3.0))
    close(W.exponential(7, center=1.0, sym=False), TW.exponential(7, center=1.0, sym=False))
    close(W.kaiser(7, beta=4.0, sym=False), TW.kaiser(7, beta=4.0, sym=False))
    close(W.general_cosine(6, a=[0.5, 0.3, 0.2]), TW.general_cosine(6, a=[0.5, 0.3, 0.2]))
    close(W.general_hamming(6, alpha=0.7), TW.general_hamming(6, alpha=0.7))
    w = W.gaussian(6, requires_grad=True)
    t = TW.gaussian(6, requires_grad=True)
    w.sum().backward()
    t.sum().backward()


@pytest.mark.parametrize("call", [
    lambda W, lib: W.gaussian(5, std=0.0), lambda W, lib: W.gaussian(-1),
    lambda W, lib: W.exponential(5, tau=-1.0), lambda W, lib: W.exponential(5, center=1.0),
    lambda W, lib: W.kaiser(5, beta=-1.0), lambda W, lib: W.hann(5, dtype=lib.float16),
    lambda W, lib: W.general_cosine(5, a=[]), lambda W, lib: W.general_cosine(5, a=3),
    lambda W, lib: W.blackman(5, dtype=lib.int64),
])
def test_signal_window_errors(call):
    same_error(lambda lib: call(lib.signal.windows, lib))
