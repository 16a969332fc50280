"""embedding_bag and nn.EmbeddingBag beyond the op samples: torch's errors, padding, empty
bags, per-sample weights, max_norm, module parity."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from tests.nn.nn_harness import module_parity, randn
from tests.nn_functional_helpers import raises_like

torch = pytest.importorskip("torch")
TF = torch.nn.functional

W = randn(10, 3)
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9])
OFF = np.array([0, 4])


def _call(lib, idx=IDX, w=W, off=OFF, **kwargs):
    conv = lambda a: None if a is None else lib.from_numpy(np.array(a, copy=True))  # noqa: E731
    if "per_sample_weights" in kwargs:
        kwargs["per_sample_weights"] = conv(kwargs["per_sample_weights"])
    return lib.nn.functional.embedding_bag(conv(idx), conv(w), conv(off), **kwargs)


ERRORS = {
    "offsets_start": dict(off=np.array([1, 4])),
    "offsets_end": dict(off=np.array([0, 9])),
    "index_range": dict(idx=IDX + 5),
    "float_indices": dict(idx=IDX.astype(np.float32)),
    "padding_range": dict(padding_idx=10),
    "psw_mode": dict(mode="max", per_sample_weights=np.ones(8, np.float32)),
    "psw_shape": dict(per_sample_weights=np.ones(7, np.float32)),
    "psw_dtype": dict(mode="sum", per_sample_weights=np.ones(8)),
    "long_weight": dict(w=np.arange(30).reshape(10, 3)),
    "offsets_2d": dict(off=OFF[None]),
    "offsets_none": dict(off=None),
    "mode": dict(mode="avg"),
    "2d_with_offsets": dict(idx=IDX.reshape(2, 4)),
    "3d_input": dict(idx=IDX.reshape(2, 2, 2), off=None),
    "1d_weight": dict(w=W[0]),
    "max_freq": dict(mode="max", scale_grad_by_freq=True),
    "max_sparse": dict(mode="max", sparse=True),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    kwargs = ERRORS[name]
    if name == "index_range":  # torch's threads race to report it: its usual message
        with pytest.raises(RuntimeError, match=r"^Expected i < index_size to be true, but got "
                                               r"false\.  \(Could this error message be"):
            _call(retrograd, **kwargs)
        return
    if name == "2d_with_offsets":  # the message names the offsets' class
        with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
            _call(retrograd, **kwargs)
        return
    raises_like(lambda: _call(retrograd, **dict(kwargs)), lambda: _call(torch, **dict(kwargs)))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_empty_bags_and_empty_input(mode):
    for kwargs in (dict(off=np.array([0, 4, 4, 8])), dict(idx=IDX[:0], off=np.array([0, 0])),
                   dict(off=np.array([0, 4, 8]), include_last_offset=True),
                   dict(idx=IDX.astype(np.int32), off=OFF.astype(np.int32))):
        ours, theirs = _call(retrograd, mode=mode, **kwargs), _call(torch, mode=mode, **kwargs)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    # no bags at all (torch's max kernel crashes on it, so only its shape is checked here)
    assert tuple(_call(retrograd, mode=mode, off=np.array([], np.int64)).shape) == (0, 3)


def test_max_mode_gradient_goes_to_the_first_maximum():
    w = np.array([[1.0, 5.0], [3.0, 2.0], [3.0, 5.0]])
    idx, off = np.array([0, 1, 2, 2]), np.array([0])
    grads = []
    for lib in (retrograd, torch):
        wt = lib.from_numpy(w.copy()).requires_grad_()
        lib.nn.functional.embedding_bag(lib.from_numpy(idx), wt, lib.from_numpy(off),
                                        mode="max").sum().backward()
        grads.append(wt.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_max_norm_renormalizes_used_rows_in_place():
    ours = retrograd.from_numpy(W * 3)
    theirs = torch.from_numpy(W * 3)
    a = F.embedding_bag(retrograd.from_numpy(IDX), ours, retrograd.from_numpy(OFF), max_norm=1.0)
    b = TF.embedding_bag(torch.from_numpy(IDX), theirs, torch.from_numpy(OFF), max_norm=1.0)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5)


def test_swapped_arguments_warn_and_work():
    with pytest.warns(UserWarning, match="Argument order of nn.functional.embedding_bag"):
        out = F.embedding_bag(retrograd.from_numpy(W), retrograd.from_numpy(IDX),
                              retrograd.from_numpy(OFF))
    np.testing.assert_allclose(out.numpy(), _call(torch).numpy(), rtol=1e-6)


def test_double_backward_through_weight_gradient():
    w = retrograd.from_numpy(W.astype(np.float64)).requires_grad_()
    psw = retrograd.rand(8, dtype=retrograd.float64, requires_grad=True)
    out = F.embedding_bag(retrograd.from_numpy(IDX), w, retrograd.from_numpy(OFF), mode="sum",
                          per_sample_weights=psw)
    (gw,) = retrograd.autograd.grad(out.pow(2).sum(), w, create_graph=True)
    gw.sum().backward()
    assert psw.grad is not None and w.grad is not None


MODULES = {
    "mean": dict(),
    "sum_padding": dict(mode="sum", padding_idx=-1),
    "max_last_offset": dict(mode="max", include_last_offset=True),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_parity_and_repr(name):
    kwargs = MODULES[name]
    make = lambda lib: lib.nn.EmbeddingBag(10, 3, **kwargs)  # noqa: E731
    assert repr(make(retrograd)) == repr(make(torch))
    off = np.array([0, 3, 8]) if kwargs.get("include_last_offset") else OFF
    module_parity(make, [IDX, off])


def test_module_padding_row_is_zero_and_from_pretrained():
    bag = retrograd.nn.EmbeddingBag(6, 2, padding_idx=2)
    assert (bag.weight[2] == 0).all()
    table = retrograd.from_numpy(randn(4, 3))
    pre = retrograd.nn.EmbeddingBag.from_pretrained(table, mode="sum")
    assert not pre.weight.requires_grad
    ours = pre(retrograd.from_numpy(np.array([[0, 1], [2, 3]])))
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(randn(4, 3)), mode="sum")(
        torch.from_numpy(np.array([[0, 1], [2, 3]])))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_namespace_embedding_bag_returns_the_kernels_outputs_as_torch(mode):
    """torch.embedding_bag / torch._embedding_bag: the four outputs and the weight gradient."""
    from tests.parity.harness import both

    weight = np.random.default_rng(3).standard_normal((10, 3))

    def prog(lib):
        w = lib.tensor(weight, requires_grad=True)
        idx, offsets = lib.tensor([1, 2, 3, 4, 4, 9]), lib.tensor([0, 2, 5])
        outs = lib.embedding_bag(w, idx, offsets, False, mode, False, None, False)
        again = lib._embedding_bag(w, idx, offsets, mode=mode, padding_idx=4)
        (outs[0] * outs[0]).sum().backward()
        return [*outs, again[0], type(outs[0].grad_fn).__name__, w.grad]

    both(prog, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", ["float_indices", "bad_mode"])
def test_namespace_embedding_bag_errors_as_torch(call):
    from tests.parity.harness import both, error_of

    def prog(lib):
        w, idx, offsets = lib.ones(5, 2), lib.tensor([0, 1]), lib.tensor([0])
        if call == "float_indices":
            return error_of(lambda: lib.embedding_bag(w, idx.float(), offsets))
        return error_of(lambda: lib.embedding_bag(w, idx, offsets, False, 5))

    assert both(prog)[0] == "raised"
