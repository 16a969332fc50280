"""max_unpool, channel_shuffle, local_response_norm and gumbel_softmax beyond the op samples:
torch's errors, randomness, round trips, module parity."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from tests.nn.nn_harness import module_parity, randn
from tests.nn_functional_helpers import raises_like

torch = pytest.importorskip("torch")
TF = torch.nn.functional

X4 = randn(1, 2, 4, 4)
X5 = randn(1, 2, 4, 4, 4)


def _pooled(lib, x: np.ndarray, nsp: int, **kwargs):
    pool = getattr(lib.nn.functional, f"max_pool{nsp}d")
    return pool(lib.from_numpy(x.copy()), 2, return_indices=True, **kwargs)


def _unpool(nsp: int, *args, **kwargs):
    return lambda lib, o, i: getattr(lib.nn.functional, f"max_unpool{nsp}d")(o, i, *args,
                                                                             **kwargs)


UNPOOL_ERRORS = {
    "float_indices": (2, lambda lib, o, i: lib.nn.functional.max_unpool2d(o, i.float(), 2)),
    "indices_shape": (2, lambda lib, o, i: lib.nn.functional.max_unpool2d(o, i[..., :1], 2)),
    "rank": (2, lambda lib, o, i: lib.nn.functional.max_unpool2d(o[0, 0], i[0, 0], 2)),
    "output_size_range": (2, _unpool(2, 2, output_size=(9, 9))),
    "output_size_length": (2, _unpool(2, 2, output_size=(5,))),
    "bad_index": (2, lambda lib, o, i: lib.nn.functional.max_unpool2d(o, i * 0 - 1, 2)),
    "long_input": (2, lambda lib, o, i: lib.nn.functional.max_unpool2d(o.long(), i, 2)),
    "rank_3d": (3, lambda lib, o, i: lib.nn.functional.max_unpool3d(o[0, 0], i[0, 0], 2)),
    "float_indices_3d": (3, lambda lib, o, i: lib.nn.functional.max_unpool3d(o, i.float(), 2)),
    "empty_channels_3d": (3, lambda lib, o, i: lib.nn.functional.max_unpool3d(o[:, :0],
                                                                              i[:, :0], 2)),
    "output_size_3d": (3, _unpool(3, 2, output_size=(4, 4))),
    # (every index equally bad: torch reports whichever bad index its threads meet first)
    "bad_index_1d": (1, lambda lib, o, i: lib.nn.functional.max_unpool1d(o, i * 0 + 9, 2)),
}


@pytest.mark.parametrize("name", sorted(UNPOOL_ERRORS))
def test_unpool_errors_match_torch(name):
    nsp, fn = UNPOOL_ERRORS[name]
    x = {1: X4[0], 2: X4, 3: X5}[nsp]
    raises_like(lambda: fn(retrograd, *_pooled(retrograd, x, nsp)),
                lambda: fn(torch, *_pooled(torch, x, nsp)))


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_unpool_inverts_pool_where_maxima_are(nsp):
    x = np.abs({1: X4[0], 2: X4, 3: X5}[nsp]) + 0.1  # positive: the zeros around lose
    for lib in (retrograd, torch):
        out, idx = _pooled(lib, x, nsp)
        back = getattr(lib.nn.functional, f"max_unpool{nsp}d")(out, idx, 2)
        again = getattr(lib.nn.functional, f"max_pool{nsp}d")(back, 2)
        np.testing.assert_array_equal(again.numpy(), out.numpy())
    ours = F.max_unpool2d(*_pooled(retrograd, X4, 2), 2, output_size=[1, 2, 5, 5])
    theirs = TF.max_unpool2d(*_pooled(torch, X4, 2), 2, output_size=[1, 2, 5, 5])
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


SHUFFLE_ERRORS = {
    "groups_divide": lambda lib, x: lib.nn.functional.channel_shuffle(x, 4),
    "groups_zero": lambda lib, x: lib.nn.functional.channel_shuffle(x, 0),
    "rank": lambda lib, x: lib.channel_shuffle(x[0, 0], 1),
    "lrn_rank": lambda lib, x: lib.nn.functional.local_response_norm(x[0], 2),
}


@pytest.mark.parametrize("name", sorted(SHUFFLE_ERRORS))
def test_channel_errors_match_torch(name):
    a = randn(2, 6, 3)
    raises_like(lambda: SHUFFLE_ERRORS[name](retrograd, retrograd.from_numpy(a.copy())),
                lambda: SHUFFLE_ERRORS[name](torch, torch.from_numpy(a.copy())))


def test_channel_shuffle_integers_and_inverse():
    a = np.arange(24).reshape(1, 6, 2, 2)
    ours = retrograd.channel_shuffle(retrograd.from_numpy(a), 3)
    np.testing.assert_array_equal(ours.numpy(),
                                  torch.channel_shuffle(torch.from_numpy(a), 3).numpy())
    np.testing.assert_array_equal(F.channel_shuffle(ours, 2).numpy(), a)


def test_local_response_norm_empty_input_is_returned():
    x = retrograd.zeros(0, 3, 4)
    assert F.local_response_norm(x, 2) is x


def test_gumbel_softmax_reproducible_and_hard_one_hot():
    logits = retrograd.from_numpy(randn(4, 6)).requires_grad_()
    retrograd.manual_seed(5)
    a = F.gumbel_softmax(logits, tau=0.5)
    retrograd.manual_seed(5)
    b = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_allclose(a.detach().numpy().sum(-1), 1.0, rtol=1e-6)
    retrograd.manual_seed(5)
    h = F.gumbel_softmax(logits, tau=0.5, hard=True)
    hv = h.detach().numpy()
    assert set(np.unique(hv)) <= {0.0, 1.0} and (hv.sum(-1) == 1).all()
    assert (hv.argmax(-1) == a.detach().numpy().argmax(-1)).all()
    h.sum().backward()  # straight through: the soft sample's gradient
    assert logits.grad is not None
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(logits, eps=1e-3)


def test_gumbel_softmax_draws_differ_between_calls():
    logits = retrograd.zeros(200)
    a = F.gumbel_softmax(logits).numpy()
    b = F.gumbel_softmax(logits).numpy()
    assert not np.array_equal(a, b)


MODULES = {
    "LocalResponseNorm": (lambda nn: nn.LocalResponseNorm(3, alpha=0.01, k=2.0),
                          [randn(2, 5, 3, 3)]),
    "ChannelShuffle": (lambda nn: nn.ChannelShuffle(2), [randn(2, 4, 3)]),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_parity_and_repr(name):
    make, inputs = MODULES[name]
    assert repr(make(retrograd.nn)) == repr(make(torch.nn))
    module_parity(lambda lib: make(lib.nn), inputs)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_unpool_modules(nsp):
    x = {1: X4[0], 2: X4, 3: X5}[nsp]
    name = f"MaxUnpool{nsp}d"
    ours = getattr(retrograd.nn, name)(2)
    theirs = getattr(torch.nn, name)(2)
    assert repr(ours) == repr(theirs)
    o, i = _pooled(retrograd, x, nsp)
    to, ti = _pooled(torch, x, nsp)
    np.testing.assert_array_equal(ours(o, i).numpy(), theirs(to, ti).numpy())
