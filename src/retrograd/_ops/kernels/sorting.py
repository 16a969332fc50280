"""NumPy kernels of the ordering ops (sort, argsort, topk, kthvalue, isin): forwards and
helpers on plain arrays and Python numbers. No Tensor here: retrograd._ops.sorting declares the
ops on these (its docstring says how ties and NaN are ordered).
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._dims import wrap_dim
from retrograd._ops.layout import c_layout, empty_for

TOPK_RANGE = "selected index k out of range"
KTH_RANGE = "kthvalue(): selected number k out of range for dimension {}"
KTH_EMPTY = "kthvalue(): Expected reduction dim {} to have non-zero size."
SORT_COMPLEX = " Sort does not support complex dtypes on CPU"
TOPK_BOOL = "topk does not support bool dtypes on CPU"
KTH_BOOL = "\"kthvalue_cpu\" not implemented for 'Bool'"
ISIN_BOOL = "Unsupported input type encountered for isin(): Bool"


def _sortable(a: np.ndarray) -> np.ndarray:
    """`a` in a dtype NumPy sorts natively (ml_dtypes' bfloat16 / float8 widen exactly)."""
    if a.dtype.kind == "V":
        return a.astype(np.float32)
    if a.dtype.kind == "c":
        raise RuntimeError(SORT_COMPLEX)
    return a


def order(a: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """Stable sorting indices of `a` along d (NaN largest), as int64."""
    a = _sortable(a)
    if not descending:
        return np.argsort(a, axis=d, kind="stable")
    rev = np.argsort(np.flip(a, d), axis=d, kind="stable")
    return (a.shape[d] - 1) - np.flip(rev, d)


# Rows at least this long select with np.partition (linear) instead of a full sort; both give
# exactly the stable order's first k, ties broken by index.
_PARTITION_MIN = 256


def _as_rows(key: np.ndarray, d: int) -> tuple:
    """key with dim d moved last, as a (rows, n) array, and the moved shape."""
    moved = np.moveaxis(key, d, -1)
    return moved.reshape(-1, moved.shape[-1]), moved.shape


def _before(x: np.ndarray, t: np.ndarray, largest: bool) -> np.ndarray:
    """x comes strictly before t in the order (NaN the largest value)."""
    if x.dtype.kind != "f":
        return x > t if largest else x < t
    if largest:
        return (x > t) | (np.isnan(x) & ~np.isnan(t))
    return (x < t) | (~np.isnan(x) & np.isnan(t))


def _same(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    if x.dtype.kind != "f":
        return x == t
    return (x == t) | (np.isnan(x) & np.isnan(t))


def _threshold(rows: np.ndarray, k: int, largest: bool) -> tuple:
    """Of each row, against its k-th value in the order: the mask of values equal to it, how
    many of those the first k take (the ones of lowest index), and the mask of values before
    it."""
    n = rows.shape[1]
    kth = n - k if largest else k - 1
    t = np.partition(rows, kth, axis=1)[:, kth:kth + 1]
    same = _same(rows, t)
    before = _before(rows, t, largest)
    need = k - before.sum(1, keepdims=True)
    return same, need, before


def _first_needed(same: np.ndarray, need: np.ndarray) -> np.ndarray:
    """Of the values equal to the threshold, the first `need` of each row (by index). Most
    rows hold exactly as many as they need, which takes no running count."""
    if (same.sum(1, keepdims=True) == need).all():
        return same
    return same & (np.cumsum(same, 1) <= need)


def first_k(a: np.ndarray, d: int, k: int, largest: bool) -> np.ndarray:
    """Indices along d of the first k elements of the stable order (largest first or smallest
    first), in that order."""
    n = a.shape[d]
    if n < _PARTITION_MIN or k in (0, n):
        return order(a, d, largest)[(slice(None),) * d + (slice(0, k),)]
    rows, shape = _as_rows(_sortable(a), d)
    if n >= _CHUNKED_MIN and k * _CHUNK * 4 <= n:  # NOTE [Top-k by chunks]
        cols = _first_k_by_chunks(rows, k, largest)
    else:
        cols = _first_k_rows(rows, k, largest)
    return np.moveaxis(cols.reshape(shape[:-1] + (k,)), -1, d)


def _first_k_rows(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """first_k of each row of a (rows, n) array, by a threshold from np.partition."""
    same, need, before = _threshold(rows, k, largest)
    chosen = before | _first_needed(same, need)
    cols = np.nonzero(chosen)[1].reshape(-1, k)  # k per row, in index order
    return np.take_along_axis(cols, order(np.take_along_axis(rows, cols, 1), 1, largest), 1)


# NOTE [Top-k by chunks]
# For a few elements of long rows, partitioning every element is most of topk's cost. Split
# each row's first m * _CHUNK elements into m chunks, chunk c holding the elements c, c + m,
# c + 2m, ... (so that their extremes are one reduction across rows of the (_CHUNK, m) view),
# and take each chunk's extreme (largest: max, where a NaN wins as in the order; smallest:
# fmin, where it loses). Let L be the k-th of those extremes: at least k elements lie at or
# before L in the order, so every element of the first k does, and each lies in a chunk whose
# extreme does, or in the tail past the chunks. When exactly k chunks have an extreme at or
# before L, those chunks and the tail hold the first k and every element tied with them, so
# the first k of those candidates (kept in index order) are the row's. Rows with more such
# chunks (ties at L) take the partition path.
_CHUNK = 16
_CHUNKED_MIN = 512


def _first_k_by_chunks(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    r, n = rows.shape
    m = n // _CHUNK
    strided = rows[:, :m * _CHUNK].reshape(r, _CHUNK, m)
    extremes = strided.max(1) if largest else np.fmin.reduce(strided, axis=1)
    kth = m - k if largest else k - 1
    bound = np.partition(extremes, kth, axis=1)[:, kth:kth + 1]
    taken = _before(extremes, bound, largest) | _same(extremes, bound)
    clear = taken.sum(1) == k
    out = np.empty((r, k), np.int64)
    if not clear.all():
        out[~clear] = _first_k_rows(rows[~clear], k, largest)
        if not clear.any():
            return out
        rows, taken = rows[clear], taken[clear]
    chunk_ids = np.nonzero(taken)[1].reshape(-1, k)  # ascending
    cols = (np.arange(_CHUNK)[:, None] * m + chunk_ids[:, None, :]).reshape(-1, _CHUNK * k)
    if m * _CHUNK < n:  # the tail, whose indices follow every chunk's
        tail = np.broadcast_to(np.arange(m * _CHUNK, n), (len(cols), n - m * _CHUNK))
        cols = np.concatenate([cols, tail], 1)
    candidates = np.take_along_axis(rows, cols, 1)
    out[clear] = np.take_along_axis(cols, _first_k_rows(candidates, k, largest), 1)
    return out


def kth_index(a: np.ndarray, d: int, k: int) -> np.ndarray:
    """Index along d of the k-th smallest element (1-based) of the stable order, keeping d."""
    n = a.shape[d]
    if n < _PARTITION_MIN:
        return np.take(order(a, d, False), [k - 1], axis=d)
    rows, shape = _as_rows(_sortable(a), d)
    same, need, _ = _threshold(rows, k, False)
    pos = np.argmax(same & (np.cumsum(same, 1) == need), axis=1)
    return np.moveaxis(pos.reshape(shape[:-1] + (1,)), -1, d)


def _like_input(a: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` in `a`'s memory layout (torch allocates sort's outputs like its input)."""
    out = empty_for(a.shape, values.dtype, [a])
    out[...] = values
    return out




def sort(a, dim, descending):
    wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        _sortable(a)
        return a.copy(), np.zeros((), np.int64)
    d = dim % a.ndim
    idx = order(a, d, descending)
    return _like_input(a, np.take_along_axis(a, idx, d)), _like_input(a, idx)


def stable_sort(a, stable, dim, descending):
    return sort(a, dim, descending)


def argsort(a, stable, dim, descending):
    wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        _sortable(a)
        return np.zeros((), np.int64)
    return _like_input(a, order(a, dim % a.ndim, descending))


def topk(a, k, dim, largest, sorted):  # noqa: A002 - torch's name
    wrap_dim(dim, a.ndim)
    if a.dtype.kind == "b":
        raise RuntimeError(TOPK_BOOL)
    n = a.shape[dim] if a.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(TOPK_RANGE)
    if a.ndim == 0:
        _sortable(a)
        return a.copy(), np.zeros((), np.int64)
    d = dim % a.ndim
    # the first k of the stable order: sorted whatever `sorted` says (torch leaves that order
    # unspecified for sorted=False)
    idx = np.array(first_k(a, d, k, largest), order="C")
    return c_layout(np.take_along_axis(a, idx, d)), idx


def kthvalue(a, k, dim, keepdim):
    wrap_dim(dim, a.ndim)
    if a.dtype.kind == "b":
        raise NotImplementedError(KTH_BOOL)
    d = dim % a.ndim if a.ndim else 0
    n = a.shape[d] if a.ndim else 1
    if a.ndim and n == 0:
        raise IndexError(KTH_EMPTY.format(d))
    if not 1 <= k <= n:
        raise RuntimeError(KTH_RANGE.format(d))
    if a.ndim == 0:
        _sortable(a)
        return a.copy(), np.zeros((), np.int64)
    idx = kth_index(a, d, k)
    values = np.take_along_axis(a, idx, d)
    if not keepdim:
        values, idx = np.squeeze(values, d), np.squeeze(idx, d)
    return c_layout(values), c_layout(idx)


def isin(elements, test_elements, assume_unique, invert):
    if elements.dtype.kind == "b" or test_elements.dtype.kind == "b":
        raise RuntimeError(ISIN_BOOL)
    common = D.promote_types(D.from_numpy_dtype(elements.dtype),
                             D.from_numpy_dtype(test_elements.dtype)).np
    # both in the promoted dtype (ml_dtypes' then widened to float32, which holds them exactly)
    e, t = (x.astype(common, copy=False) for x in (elements, test_elements))
    if common.kind == "V":
        e, t = e.astype(np.float32), t.astype(np.float32)
    found = np.isin(e, t, invert=invert)
    return c_layout(np.asarray(found))
