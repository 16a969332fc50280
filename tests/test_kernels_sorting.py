"""The ordering kernels on plain arrays, against NumPy's stable sort."""

from __future__ import annotations

import numpy as np
import pytest

from retrograd._ops.kernels import sorting as K


def test_order_is_stable_with_nan_largest():
    a = np.array([2.0, np.nan, 1.0, 2.0, -1.0])
    np.testing.assert_array_equal(K.order(a, 0, False), [4, 2, 0, 3, 1])
    # descending keeps equal values in their original order too
    np.testing.assert_array_equal(K.order(a, 0, True), [1, 0, 3, 2, 4])


@pytest.mark.parametrize("n", [7, 600])  # a full sort and the np.partition path
def test_first_k_and_kth_index_agree_with_a_stable_sort(n):
    a = np.random.default_rng(0).integers(0, 20, (3, n)).astype(np.float64)
    stable = np.argsort(a, axis=1, kind="stable")
    np.testing.assert_array_equal(K.first_k(a, 1, 5, False), stable[:, :5])
    desc = np.argsort(-a, axis=1, kind="stable")
    np.testing.assert_array_equal(K.first_k(a, 1, 5, True), desc[:, :5])
    np.testing.assert_array_equal(K.kth_index(a, 1, 4), stable[:, 3:4])


def _rows(kind: str, rng, shape: tuple) -> np.ndarray:
    if kind == "distinct":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "ties":  # many rows whose chunk extremes tie at the bound: the partition path
        return rng.integers(-3, 4, shape).astype(np.int64)
    if kind == "nan":
        a = rng.standard_normal(shape)
        a[rng.random(shape) < 0.01] = np.nan
        return a
    if kind == "uint8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    if kind == "float16 ties":
        return np.round(rng.standard_normal(shape), 1).astype(np.float16)
    a = rng.standard_normal(shape)  # the extremes in the tail past the last whole chunk
    a[:, -5:], a[:, :3] = 1e9, -1e9
    return a


# NOTE [Top-k by chunks]: lengths with and without a tail past the chunks, k up to the path's
# limit (a chunk count of 4k)
@pytest.mark.parametrize("kind", ["distinct", "ties", "nan", "uint8", "float16 ties", "tail"])
@pytest.mark.parametrize("n, k", [(512, 8), (1000, 10), (1000, 15), (4103, 1), (5000, 70)])
@pytest.mark.parametrize("largest", [True, False])
def test_top_k_by_chunks_is_the_stable_order_first_k(kind, n, k, largest):
    a = _rows(kind, np.random.default_rng(n + k), (4, n))
    key = -a.astype(np.float64) if largest else a.astype(np.float64)
    key[np.isnan(key)] = -np.inf if largest else np.inf  # NaN is the largest value
    want = np.argsort(key, axis=1, kind="stable")[:, :k]
    np.testing.assert_array_equal(K._first_k_by_chunks(a, k, largest), want)
    np.testing.assert_array_equal(K.first_k(a, 1, k, largest), want)


def test_sort_forward_values_indices_and_layout():
    a = np.asfortranarray(np.array([[3.0, 1.0], [2.0, 5.0]]))
    values, indices = K.sort(a, 0, False)
    np.testing.assert_array_equal(values, [[2.0, 1.0], [3.0, 5.0]])
    np.testing.assert_array_equal(indices, [[1, 0], [0, 1]])
    assert indices.dtype == np.int64 and values.flags.f_contiguous  # laid out as the input
    np.testing.assert_array_equal(K.argsort(a, True, -1, True), [[0, 1], [1, 0]])


def test_topk_kthvalue_errors_and_zero_dim():
    with pytest.raises(RuntimeError, match=K.TOPK_RANGE):
        K.topk(np.zeros(3), 4, -1, True, True)
    with pytest.raises(RuntimeError, match="topk does not support bool"):
        K.topk(np.zeros(3, bool), 1, -1, True, True)
    with pytest.raises(RuntimeError, match="out of range for dimension 0"):
        K.kthvalue(np.zeros(3), 4, 0, False)
    values, indices = K.kthvalue(np.array(2.5), 1, 0, False)
    assert values == 2.5 and indices == 0
    with pytest.raises(RuntimeError, match="complex"):
        K.sort(np.zeros(2, complex), 0, False)


def test_isin_promotes_and_inverts():
    got = K.isin(np.array([1, 2, 3]), np.array([2.0, 3.5]), False, False)
    np.testing.assert_array_equal(got, [False, True, False])
    got = K.isin(np.array([1.0, np.nan]), np.array([np.nan]), False, True)
    np.testing.assert_array_equal(got, [True, True])
    with pytest.raises(RuntimeError, match="Bool"):
        K.isin(np.array([True]), np.array([1]), False, False)
