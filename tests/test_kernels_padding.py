"""The padding kernels on plain arrays, against torch.nn.functional.pad."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import padding as K

RNG = np.random.default_rng(8)


@pytest.mark.parametrize("pad", [(1, 2), (2, 0, 1, 1), (-1, 2, 0, -1)])
def test_constant_pad_matches_torch(pad):
    x = RNG.standard_normal((2, 3, 4))
    np.testing.assert_array_equal(K._constant_pad_forward(x, pad, 0.5),
                                  F.pad(torch.from_numpy(x), pad, value=0.5).numpy())


def test_integer_and_bool_fill_values():
    assert K._constant_pad_forward(np.ones(2, np.int64), (1, 0), 2.7).tolist() == [2, 1, 1]
    assert K._constant_pad_forward(np.ones(1, bool), (0, 1), 0).tolist() == [True, False]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_index_pads_and_their_adjoint(mode):
    x = RNG.standard_normal((1, 2, 4, 5))
    pad = (1, 2, 2, 1)
    want = F.pad(torch.from_numpy(x), pad, mode=mode).numpy()
    got = K._circular_forward(x, pad) if mode == "circular" else K._gather_pad(x, pad, mode)
    np.testing.assert_array_equal(got, want)
    if mode != "circular":
        g = RNG.standard_normal(got.shape)
        assert np.isclose((got * g).sum(), (x * K._scatter_pad(g, x.shape, pad, mode)).sum())


@pytest.mark.parametrize("shape, pad, mode", [
    ((1, 2, 3), (3, 0), "reflect"),
    ((1, 2, 3), (-2, -2), "replicate"),
    ((1, 0, 3), (1, 1), "reflect"),
])
def test_checks_raise_torchs_messages(shape, pad, mode):
    with pytest.raises(RuntimeError) as info:
        F.pad(torch.zeros(shape), pad, mode=mode)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_index_pad(np.zeros(shape), pad, mode, 1)


@pytest.mark.parametrize("pad", [(1, 2, 3), (1, 2, 3, 4)])
def test_pad_length_check_is_constant_pad_nds(pad):
    with pytest.raises(RuntimeError) as info:
        torch.constant_pad_nd(torch.zeros(2), pad)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_pad_length(pad, 1)
