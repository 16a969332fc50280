"""The searchsorted kernel on plain arrays, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from retrograd._ops.kernels import bucketize as K


def test_one_row_applies_to_every_value():
    seq = np.array([1.0, 2.0, 2.0, 5.0])
    values = np.array([[2.0, 0.0], [6.0, 2.5]])
    got = K.searchsorted(seq, values, False, False, None, None)
    np.testing.assert_array_equal(got, np.searchsorted(seq, values))
    assert got.dtype == np.int64
    right = K.searchsorted(seq, values, True, True, None, None)
    np.testing.assert_array_equal(right, np.searchsorted(seq, values, side="right"))
    assert right.dtype == np.int32


def test_rows_and_sorter():
    seq = np.array([[1, 3, 5], [2, 4, 6]])
    values = np.array([[3, 6], [1, 5]])
    got = K.searchsorted(seq, values, False, False, "left", None)
    np.testing.assert_array_equal(got, [[1, 3], [0, 2]])
    sorter = np.array([[2, 0, 1], [0, 1, 2]])
    shuffled = np.take_along_axis(seq, np.argsort(sorter, axis=-1), axis=-1)
    np.testing.assert_array_equal(K.searchsorted(shuffled, values, False, False, None, sorter),
                                  got)


def test_bad_arguments():
    seq = np.arange(3.0)
    with pytest.raises(RuntimeError, match="side can only be"):
        K.searchsorted(seq, seq, False, False, "middle", None)
    with pytest.raises(RuntimeError, match="opposites"):
        K.searchsorted(seq, seq, False, True, "left", None)
    with pytest.raises(RuntimeError, match="first N-1"):
        K.searchsorted(np.zeros((2, 3)), np.zeros((3, 1)), False, False, None, None)
