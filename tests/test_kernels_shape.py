"""The shape kernels on plain arrays, against torch: views keep memory, copies keep torch's values
and layout, the checks raise torch's messages."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from retrograd._ops.kernels import shape as K


def _torch_message(fn) -> str:
    with pytest.raises(Exception) as info:
        fn()
    return str(info.value)


def test_infer_size():
    assert K.infer_size((2, -1), 6) == (2, 3)
    assert K.infer_size((3, 2), 6) == (3, 2)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        K.infer_size((-1, -1), 6)
    expected = _torch_message(lambda: torch.zeros(6).view(4, -1))
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        K.infer_size((4, -1), 6)


def test_views_share_memory_and_match_torch():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = torch.from_numpy(a)
    cases = [
        (K._permute_forward(a, [2, 0, 1]), t.permute(2, 0, 1)),
        (K._transpose_forward(a, 0, -1), t.transpose(0, -1)),
        (K._select_forward(a, 1, -1), t.select(1, -1)),
        (K._slice_forward(a, 2, 1, 4, 2), t[:, :, 1:4:2]),
        (K._diagonal_forward(a, 1, 1, 2), t.diagonal(1, 1, 2)),
        (K._unsqueeze_forward(a, -1), t.unsqueeze(-1)),
        (K._expand_forward(a[:, :1], (5, 2, 3, 4)), t[:, :1].expand(5, 2, 3, 4)),
    ]
    for got, want in cases:
        np.testing.assert_array_equal(got, want.numpy())
        assert np.shares_memory(got, a)
        assert got.strides == tuple(s * a.itemsize for s in want.stride())


def test_expanded_views_are_read_only_where_elements_alias():
    a = np.arange(3.0)
    out = K._expand_forward(a, (2, 3))
    assert K.internal_overlap(out) and not out.flags.writeable
    assert not K.internal_overlap(a)


@pytest.mark.parametrize("call, torch_call", [
    (lambda a: K._select_forward(a, 0, 5), lambda t: t.select(0, 5)),
    (lambda a: K._expand_forward(a, (3,)), lambda t: t.expand(3)),
    (lambda a: K._expand_forward(a, (2, 5)), lambda t: t.expand(2, 5)),
    # several mismatches: the last one is named, as torch checks from the right
    (lambda a: K._expand_forward(a, (4, 5)), lambda t: t.expand(4, 5)),
    (lambda a: K._expand_forward(a, (-2, 5, 3)), lambda t: t.expand(-2, 5, 3)),
    (lambda a: K._permute_forward(a, [0]), lambda t: t.permute(0)),
    (lambda a: K._cat_forward([a, np.zeros(())], 0), lambda t: torch.cat([t, torch.zeros(())])),
])
def test_checks_raise_torchs_messages(call, torch_call):
    a = np.zeros((2, 3))
    expected = _torch_message(lambda: torch_call(torch.zeros(2, 3)))
    with pytest.raises((RuntimeError, IndexError), match=re.escape(expected)):
        call(a)


def test_cat_and_stack():
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((1, 3), np.float64)
    got = K._cat_forward([a, b], 0)
    want = torch.cat([torch.from_numpy(a), torch.from_numpy(b)], 0).numpy()
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype and got.flags.c_contiguous
    # a 1-d empty input is skipped whatever the others' shapes (torch's legacy rule)
    np.testing.assert_array_equal(K._cat_forward([a, np.zeros(0, np.float32)], 1), a)
    np.testing.assert_array_equal(K._stack_forward([a, a], -1),
                                  torch.stack([torch.from_numpy(a)] * 2, -1).numpy())


def test_split_sizes_and_pieces():
    assert K._split_sizes(7, 3) == [3, 3, 1]
    a = np.arange(7)
    pieces = K._split_forward(a, 3, 0)
    assert [p.tolist() for p in pieces] == [p.tolist() for p in torch.arange(7).split(3)]
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly"):
        K._split_with_sizes_forward(a, [3, 3], 0)


def test_copies_match_torch():
    a = np.arange(12.0).reshape(3, 4)
    t = torch.from_numpy(a)
    np.testing.assert_array_equal(K._roll_forward(a, [1, -2], [0, 1]),
                                  torch.roll(t, (1, -2), (0, 1)).numpy())
    np.testing.assert_array_equal(K._flip_forward(a, [0, 1]), torch.flip(t, (0, 1)).numpy())
    np.testing.assert_array_equal(K._repeat_forward(a, [2, 1, 2]), t.repeat(2, 1, 2).numpy())
    np.testing.assert_array_equal(K._tri_forward(np.triu, "triu")(a, 1), torch.triu(t, 1).numpy())
    with pytest.raises(RuntimeError, match="triu: input tensor must have at least 2 dimensions"):
        K._tri_forward(np.triu, "triu")(np.zeros(3), 0)


def test_as_strided_gradient_sums_overlapping_positions():
    g = np.ones((2, 2))
    # a (2, 2) window with strides (1, 1) over 3 elements reads the middle one twice
    got = K._as_strided_grad_forward(g, [2, 2], [1, 1], 0, [3], [1], 0)
    np.testing.assert_array_equal(got, [1.0, 2.0, 1.0])
