"""NumPy kernels of gather and scatter: index checks, the gather forward and the scatter
writers (plain, accumulating, or reducing with add/multiply) on plain arrays and Python numbers.
No Tensor here: retrograd._ops.indexing declares the ops on these.
"""

from __future__ import annotations

import functools

import numpy as np

from retrograd import _errors as E
from retrograd._dims import wrap_dim
from retrograd._ops.kernels.add_at import add_at, flat_positions, ufunc_at

INT_INDEX = (np.dtype(np.int64), np.dtype(np.int32))
SCATTER_REDUCE = "reduce argument must be either add or multiply."
# how scatter's `reduce` combines: the ufunc whose .at accumulates repeated indices
_REDUCERS = {"add": np.add, "multiply": np.multiply}


def check_index_dtype(index: np.ndarray, name: str) -> None:
    if index.dtype not in INT_INDEX:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def same_rank(a: np.ndarray, index: np.ndarray, what: str) -> None:
    if max(a.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} "
                           "tensor")


def check_bounds(index: np.ndarray, d: int, n: int) -> None:
    if index.size and (index.min() < 0 or index.max() >= n):
        bad = index[(index < 0) | (index >= n)].flat[0]
        raise RuntimeError(E.INDEX_RANGE.format(int(bad), d, n))


def lead(a: np.ndarray, shape: tuple) -> np.ndarray:
    """The leading corner of `a` with `shape` (a view)."""
    return a[tuple(slice(0, s) for s in shape)]


@functools.lru_cache(maxsize=256)
def _grids(shape: tuple, d: int) -> tuple:
    """Broadcastable aranges over `shape` for every dim but d (cached: gather/scatter reuse)."""
    nd = len(shape)
    out = []
    for k, n in enumerate(shape):
        g = None if k == d else np.arange(n).reshape((1,) * k + (n,) + (1,) * (nd - k - 1))
        if g is not None:
            g.flags.writeable = False
        out.append(g)
    return tuple(out)


def grid_key(index: np.ndarray, d: int) -> tuple:
    """Fancy key addressing a[..., index[i], ...] along d, identity elsewhere."""
    key = list(_grids(index.shape, d))
    key[d] = index
    return tuple(key)


def as_1d(*arrays):
    return tuple(x.reshape(1) if x.ndim == 0 else x for x in arrays)


def gather(a, dim, index, sparse_grad=False):
    d = wrap_dim(dim, a.ndim)
    if index.size == 0:  # torch checks nothing else of an empty index
        return np.empty(index.shape, a.dtype)
    check_index_dtype(index, "gather")
    same_rank(a, index, "input")
    shape0 = index.shape
    a1, index = as_1d(a, index)
    for k in range(a1.ndim):
        if k != d and index.shape[k] > a1.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(index.shape)} to be no larger than self {list(a1.shape)} "
                               f"apart from dimension {d}")
    if a1.flags.c_contiguous and index.size >= _FLAT_GATHER_MIN and (
            index.ndim > 2 or 0 in index.strides):
        # np.take at flat positions: several times faster than fancy indexing with one index
        # array per dim past two dims; a dim the index repeats (expand's stride 0) is
        # computed once
        key = list(_grids(index.shape, d))
        key[d] = _unexpanded(index)
        flat = flat_positions(a1, 0, tuple(key)) if key[d].min() >= 0 else None
        if flat is None:
            check_bounds(index, d, a1.shape[d])
        return np.take(a1.reshape(-1), flat).reshape(shape0)
    try:
        if index.min() < 0:  # NumPy would wrap negative indices; torch rejects them
            raise IndexError
        return a1[grid_key(index, d)].reshape(shape0)
    except IndexError:
        check_bounds(index, d, a1.shape[d])
        raise


_FLAT_GATHER_MIN = 16384  # smaller gathers: fancy indexing's lower fixed cost wins


def _unexpanded(index: np.ndarray) -> np.ndarray:
    """index without the dims it repeats (stride 0, as from expand): size 1 there."""
    if 0 not in index.strides:
        return index
    return index[tuple(slice(0, 1) if st == 0 else slice(None) for st in index.strides)]


def check_scatter(a, index, src, d: int, name: str) -> None:
    if src is not None and src.dtype != a.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if index.size == 0:  # torch checks nothing of an empty index: nothing is written
        return
    check_index_dtype(index, name)
    same_rank(a, index, "self")
    if src is not None:
        same_rank(src, index, "src")
    for k in range(index.ndim):
        too_big = (k != d and index.shape[k] > a.shape[k]) or (
            src is not None and index.shape[k] > src.shape[k])
        if too_big:
            tail = f" and to be no larger size than src {list(src.shape)}" if src is not None \
                else ""
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                               f"{list(a.shape)} apart from dimension {d}{tail}")
    if index.size and index.min() < 0:
        check_bounds(index, d, a.shape[d])


def scatter_into(a, dim, index, src, value, add: bool, name: str,
                 reduce: str | None = None) -> None:
    """Write src (or the number value) into `a` at index along dim: replacing, or with
    `add` / `reduce` combining with what is there (repeated indices accumulate)."""
    d = wrap_dim(dim, a.ndim)
    a1, index = as_1d(a, index)
    src1 = None if src is None else as_1d(src)[0]
    check_scatter(a1, index, src1, d, name)
    if index.size == 0:
        return
    key = grid_key(index, d)
    vals = value if src1 is None else lead(src1, index.shape)
    try:
        if add:
            add_at(a1, key, vals)
        elif reduce is not None:
            if src1 is None:  # the number in self's dtype, as torch casts it
                vals = np.asarray(value).astype(a1.dtype)
            ufunc_at(_REDUCERS[reduce], a1, key, vals)
        else:
            a1[key] = vals
    except IndexError:
        check_bounds(index, d, a1.shape[d])
        raise


def fresh(a):
    return np.array(a, order="C", copy=True)


def scatter_src(a, dim, index, src):
    out = fresh(a)
    scatter_into(out, dim, index, src, None, False, "scatter")
    return out


def scatter_value(a, dim, index, value):
    out = fresh(a)
    scatter_into(out, dim, index, None, value, False, "scatter")
    return out


def scatter_add(a, dim, index, src):
    out = fresh(a)
    scatter_into(out, dim, index, src, None, True, "scatter")  # (torch names it so in errors)
    return out


def check_reduce(reduce: str) -> None:
    if reduce not in _REDUCERS:
        raise RuntimeError(SCATTER_REDUCE)


def scatter_reduce_src(a, dim, index, src, reduce):
    check_reduce(reduce)
    out = fresh(a)
    scatter_into(out, dim, index, src, None, False, "scatter", reduce)
    return out


def scatter_reduce_value(a, dim, index, value, reduce):
    check_reduce(reduce)
    out = fresh(a)
    scatter_into(out, dim, index, None, value, False, "scatter", reduce)
    return out
