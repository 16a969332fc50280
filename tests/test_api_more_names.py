"""torch.fill, torch.range, torch.is_complex, torch.detach and the functional RNN cells
(torch.lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell) against torch 2.13."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")
LIBS = (torch, retrograd)


def _both(fn):
    return [fn(lib) for lib in LIBS]


def test_fill():
    def run(lib):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        v = lib.tensor(3.5, dtype=lib.float64, requires_grad=True)
        a, b = lib.fill(x, 2.0), lib.fill(x, v)
        (a.sum() + 2 * b.sum()).backward()
        with pytest.raises(RuntimeError) as err:
            lib.fill(x, lib.tensor([1.0, 2.0]))
        return (a.tolist(), b.tolist(), a.grad_fn.name(), b.grad_fn.name(), x.grad.tolist(),
                v.grad.item(), str(err.value), lib.fill(lib.ones(2, dtype=lib.int64), 2.7).tolist())

    t, r = _both(run)
    assert r == t


@pytest.mark.parametrize("args, kwargs", [((0, 1, 0.3), {}), ((5, 1, -2), {}), ((0, 4), {}),
                                          ((0, 2), {"dtype": "float64"}),
                                          ((1, 3), {"dtype": "int64"}), ((0, 4, 1.5), {})])
def test_range(args, kwargs):
    def run(lib):
        kw = {k: getattr(lib, v) for k, v in kwargs.items()}
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = lib.range(*args, **kw)
        return out.tolist(), str(out.dtype).split(".")[-1], \
            [str(w.message).replace("torch.", "retrograd.") for w in seen]

    t, r = _both(run)
    assert r == t


@pytest.mark.parametrize("args", [(0, 2, 0), (0, 2, -1)])
def test_range_errors(args):
    messages = []
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError) as err:
                lib.range(*args)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_is_complex_and_detach():
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        errors = []
        for fn in (lib.is_complex, lib.detach):
            with pytest.raises(TypeError) as err:
                fn(3)
            errors.append(str(err.value))
        return lib.is_complex(x), lib.detach(x).requires_grad, errors

    t, r = _both(run)
    assert r == t


def test_functional_rnn_cells():
    rng = np.random.default_rng(0)
    arrays = {k: rng.standard_normal(s) for k, s in (
        ("x", (2, 3)), ("h", (2, 4)), ("c", (2, 4)), ("wih4", (16, 3)), ("whh4", (16, 4)),
        ("b4", (16,)), ("wih3", (12, 3)), ("whh3", (12, 4)), ("b3", (12,)), ("wih1", (4, 3)),
        ("whh1", (4, 4)), ("b1", (4,)))}

    def run(lib):
        t = {k: lib.tensor(v, requires_grad=True) for k, v in arrays.items()}
        h, c = lib.lstm_cell(t["x"], (t["h"], t["c"]), t["wih4"], t["whh4"], t["b4"], t["b4"])
        g = lib.gru_cell(t["x"], t["h"], t["wih3"], t["whh3"], t["b3"], None)
        a = lib.rnn_tanh_cell(t["x"], t["h"], t["wih1"], t["whh1"])
        b = lib.rnn_relu_cell(t["x"], t["h"], t["wih1"], t["whh1"], t["b1"], t["b1"])
        (h.sum() + c.sum() * 2 + g.sum() * 3 + a.sum() * 4 + b.sum() * 5).backward()
        return [v.detach().numpy() for v in (h, c, g, a, b)] + \
            [t[k].grad.numpy() for k in arrays]

    t, r = _both(run)
    for a, b in zip(r, t):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("size, order, kwargs", [((2, 3, 4), (2, 0, 1), {}),
                                                 ((2, 3), (1, 0), {"dtype": "float64",
                                                                   "requires_grad": True}),
                                                 ((5,), (0,), {}), ((2, 1, 3), (0, 1, 2), {})])
def test_empty_permuted(size, order, kwargs):
    def run(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        t = lib.empty_permuted(size, order, **kw)
        return (tuple(t.shape), t.stride(), str(t.dtype).split(".")[-1], t.requires_grad,
                t.is_contiguous())

    t, r = _both(run)
    assert r == t


@pytest.mark.parametrize("size, order", [((2, 3), (0,)), ((2, 3), (0, 0)), ((2, 3), (0, 2)),
                                         ((2, 3), (-1, 0))])
def test_empty_permuted_errors(size, order):
    messages = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as err:
            lib.empty_permuted(size, order)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_nn_common_types_name_the_same_aliases():
    import typing

    ours, theirs = retrograd.nn.common_types, torch.nn.common_types
    names = [n for n in vars(theirs) if n.startswith("_") and n.endswith("_t")]
    assert len(names) > 20
    for name in names:
        a, b = getattr(ours, name), getattr(theirs, name)
        # the same union of the same shapes, with retrograd's Tensor where torch has its own
        def spelled(alias):
            return [str(x).replace("retrograd._tensor.", "torch.") for x in typing.get_args(alias)]

        assert spelled(a) == [str(x) for x in typing.get_args(b)], name
