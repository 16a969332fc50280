"""kernels.add_at: np.add.at through flat positions gives np.add.at's results bit for bit
(the same additions in the same order) for every key form the indexing ops produce, and falls
back to np.add.at (its errors included) for the rest."""

from __future__ import annotations

import numpy as np
import pytest

from retrograd._ops.kernels.add_at import add_at, ufunc_at

RNG = np.random.default_rng(0)
S = slice(None)
A = RNG.standard_normal((6, 5, 4)).astype(np.float32)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = {
    "rows_with_repeats_and_negatives": (A, (RNG.integers(-6, 6, 40),), _f32(40, 5, 4)),
    "middle_dim_2d_index": (A, (S, RNG.integers(0, 5, (3, 7))), _f32(6, 3, 7, 4)),
    "two_adjacent_arrays": (A, (S, RNG.integers(0, 5, 9), RNG.integers(-4, 4, 9)), _f32(6, 9)),
    "broadcast_arrays": (A, (RNG.integers(0, 6, (4, 1)), RNG.integers(0, 5, (1, 3)),
                             RNG.integers(0, 4, (4, 3))), _f32(4, 3)),
    "grid_of_three": (A, (RNG.integers(0, 6, (4, 1, 1)), RNG.integers(0, 5, (1, 3, 1)),
                          RNG.integers(0, 4, (1, 1, 2))), _f32(4, 3, 2)),
    "last_dim": (A, (S, S, RNG.integers(0, 4, 30)), _f32(6, 5, 30)),
    "scalar_value": (A, (RNG.integers(0, 6, 8),), np.float64(1.5)),
    "float64_values_broadcast": (A, (RNG.integers(0, 6, 8),), RNG.standard_normal((5, 4))),
    "integers": (np.zeros((4, 3), np.int64), (RNG.integers(0, 4, 50),),
                 RNG.integers(0, 9, (50, 3))),
    "empty_index": (np.zeros((4, 3), np.float32), (np.array([], np.int64),),
                    np.zeros((0, 3), np.float32)),
    "one_dim": (np.zeros(7, np.float32), RNG.integers(0, 7, 100), _f32(100)),
    # not the fast form: np.add.at itself
    "arrays_apart": (A, (RNG.integers(0, 6, 8), S, RNG.integers(0, 4, 8)), _f32(8, 5)),
    "boolean_mask": (A, (RNG.random(6) > 0.5,), 1.0),
    "int_and_array": (A, (2, RNG.integers(0, 5, 6)), _f32(6, 4)),
    "partial_slice": (A, (slice(1, 3), RNG.integers(0, 5, 6)), _f32(2, 6, 4)),
    "transposed": (np.ascontiguousarray(A).transpose(1, 0, 2), (RNG.integers(0, 5, 8),), 1.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_add_at_equals_numpy_bit_for_bit(name):
    arr, key, values = CASES[name]
    ours, theirs = arr.copy(), arr.copy()
    if not arr.flags.c_contiguous:  # keep the layout
        ours, theirs = arr.copy(order="K"), arr.copy(order="K")
    np.add.at(theirs, key, values)
    add_at(ours, key, values)
    assert ours.dtype == theirs.dtype
    assert np.array_equal(ours, theirs)


def test_repeated_positions_add_in_order():
    # float32 sums whose value depends on the order: 1e8 + 1 + ... + 1 - 1e8
    a = np.zeros((2, 3), np.float32)
    idx = np.array([1] * 5)
    vals = np.array([1e8, 1, 1, 1, -1e8], np.float32)[:, None] * np.ones(3, np.float32)
    b = a.copy()
    np.add.at(a, (idx,), vals)
    add_at(b, (idx,), vals)
    assert np.array_equal(a, b)


def test_other_ufuncs():
    arr, key, values = CASES["grid_of_three"]
    ours, theirs = arr.copy(), arr.copy()
    np.multiply.at(theirs, key, values)
    ufunc_at(np.multiply, ours, key, values)
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("key", [(np.array([6]),), (S, np.array([-6])), (S, S, np.array([4]))])
def test_out_of_range_raises_numpys_error(key):
    with pytest.raises(IndexError) as theirs:
        np.add.at(A.copy(), key, 1.0)
    with pytest.raises(IndexError) as ours:
        add_at(A.copy(), key, 1.0)
    assert str(ours.value) == str(theirs.value)
