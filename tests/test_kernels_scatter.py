"""The gather/scatter kernels on plain arrays, against NumPy indexing."""

from __future__ import annotations

import numpy as np
import pytest

from retrograd._ops.kernels import scatter as K

A = np.arange(6.0).reshape(2, 3)
INDEX = np.array([[0, 1, 0]])


def test_gather_along_each_dim():
    np.testing.assert_array_equal(K.gather(A, 0, INDEX), [[0.0, 4.0, 2.0]])
    np.testing.assert_array_equal(K.gather(A, 1, np.array([[2, 0], [1, 1]])), [[2, 0], [4, 4]])
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64"):
        K.gather(A, 0, INDEX.astype(np.float64))


def test_scatter_src_value_and_add_leave_the_input_alone():
    src = np.full((1, 3), 9.0)
    np.testing.assert_array_equal(K.scatter_src(A, 0, INDEX, src), [[9, 1, 9], [3, 9, 5]])
    np.testing.assert_array_equal(K.scatter_value(A, 0, INDEX, -1.0), [[-1, 1, -1], [3, -1, 5]])
    repeated = np.array([[0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(K.scatter_add(np.zeros((2, 3)), 0, repeated, np.ones((2, 3))),
                                  [[2, 2, 2], [0, 0, 0]])
    np.testing.assert_array_equal(A, np.arange(6.0).reshape(2, 3))


def test_scatter_reduce_accumulates_repeated_indices():
    repeated = np.array([[0, 0, 0], [0, 0, 0]])
    got = K.scatter_reduce_src(A + 1, 0, repeated, np.full((2, 3), 2.0), "multiply")
    np.testing.assert_array_equal(got, [[4, 8, 12], [4, 5, 6]])
    got = K.scatter_reduce_value(np.arange(6).reshape(2, 3), 0, INDEX, 2.5, "add")
    np.testing.assert_array_equal(got, [[2, 1, 4], [3, 6, 5]])  # the number in self's dtype
    assert got.dtype == np.int64
    with pytest.raises(RuntimeError, match=K.SCATTER_REDUCE):
        K.scatter_reduce_value(A, 0, INDEX, 1.0, "mean")


def test_scatter_checks():
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        K.scatter_src(A, 0, INDEX, np.ones((1, 3), np.float32))
    with pytest.raises(RuntimeError, match="out of bounds"):
        K.scatter_value(A, 0, np.array([[5, 0, 0]]), 1.0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        K.scatter_value(A, 0, np.array([0]), 1.0)


def _reference_gather(a: np.ndarray, d: int, index: np.ndarray) -> np.ndarray:
    out = np.empty(index.shape, a.dtype)
    for pos in np.ndindex(*index.shape):
        src = list(pos)
        src[d] = index[pos]
        out[pos] = a[tuple(src)]
    return out


@pytest.mark.parametrize("layout", ["C", "F"])  # flat positions, and NumPy's fancy indexing
@pytest.mark.parametrize("seed", range(6))
def test_gather_paths_pick_what_the_definition_picks(layout, seed):
    rng = np.random.default_rng(seed)
    nd = 1 + seed % 4
    shape = tuple(int(v) for v in rng.integers(1, 5, nd))
    d = seed % nd
    a = np.array(rng.standard_normal(shape), order=layout)
    ishape = tuple(int(rng.integers(1, s + 1)) if k != d else 5 for k, s in enumerate(shape))
    index = rng.integers(0, shape[d], ishape).astype(np.int32 if seed % 2 else np.int64)
    np.testing.assert_array_equal(K.gather(a, d, index), _reference_gather(a, d, index))
    if nd > 1:  # an index repeated along another dim (expand's stride 0)
        k = (d + 1) % nd
        first = index[tuple(slice(0, 1) if j == k else slice(None) for j in range(nd))]
        repeated = np.broadcast_to(first, ishape)
        np.testing.assert_array_equal(K.gather(a, d, repeated),
                                      _reference_gather(a, d, repeated))


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("bad", [-1, 3])
def test_gather_refuses_out_of_range_on_both_paths(layout, bad):
    a = np.zeros((2, 3), order=layout)
    index = np.broadcast_to(np.array([[0, bad]]), (2, 2))
    with pytest.raises(RuntimeError, match=f"index {bad} is out of bounds for dimension 1 "
                                           "with size 3"):
        K.gather(a, 1, index)
