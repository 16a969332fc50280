"""NumPy kernels that write into a tensor at given positions: index_fill, index_copy, put and
masked_scatter, each in place on a plain array, with torch's checks and messages.
"""

from __future__ import annotations

import numpy as np

from retrograd._dims import wrap_dim
from retrograd._ops.kernels.shape import _expand_forward
from retrograd._ops.layout import broadcast_error, type_name

FILL_INDEX_DTYPE = "index_fill_(): Expected dtype int64 for index."
FILL_INDEX_RANK = "Index has to be a vector/scalar"
FILL_VALUE_RANK = ("index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} "
                   "dimension(s).")
FILL_RANGE = "index {} is out of bounds for dimension {} with size {}"
COPY_INDEX_DTYPE = "index_copy_(): Expected a long tensor for index, but got {}"
COPY_INDEX_RANK = "index_copy_(): Index should have dimension 1 or 0 (got {})"
COPY_RANK = ("index_copy_(): When source and destination are not scalars, their dimensionality "
             "must match. Source dimensionality ({}), destination dimensionality ({})")
COPY_COUNT = ("index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({})")
COPY_SLICE = ("index_copy_(): Source/destination tensor must have same slice shapes. Destination "
              "slice shape: {} at dimension {} and source slice shape: {} at dimension 0.")
COPY_DTYPE = ("index_copy_(): self and source expected to have the same dtype, but got (self) {} "
              "and (source) {}")
COPY_RANGE = "index_copy_(): index {} is out of bounds for dimension {} with size {}"
PUT_INDEX_DTYPE = "put_(): Expected a long tensor for index, but got {}"
PUT_COUNT = ("put_(): Expected source and index to have the same number of elements, but got "
             "source.numel() = {}, index.numel() = {}")
PUT_DTYPE = ("put_(): self and source expected to have the same dtype, but got self.dtype = {} "
             "and source.dtype = {}")
PUT_RANGE = "out of range: tried to access index {} on a tensor of {} elements."
MASK_DTYPE = "masked_scatter_ only supports boolean masks, but got mask with dtype {}"
SCATTER_DTYPE = "masked_scatter: expected self and source to have same dtypes but got{} and {}"
MASK_EXPAND = ("expand(CPUBoolType{{{}}}, size={}): the number of sizes provided ({}) must be "
               "greater or equal to the number of dimensions in the tensor ({})")
SCATTER_COUNT = "Number of elements of source < number of ones in mask"


def copy_keeping_layout(a: np.ndarray) -> np.ndarray:
    """The out-of-place forms' fresh copy of self, in self's memory order as torch's clone."""
    return np.array(a, order="K", copy=True)


def _along(a: np.ndarray, d: int) -> np.ndarray:
    """a with dim d first (a view; a 0-d array counts as one element along a dim 0)."""
    return np.moveaxis(a.reshape(1) if a.ndim == 0 else a, d, 0)


# --- index_fill ---------------------------------------------------------------------------------


def index_fill_into(a: np.ndarray, dim: int, index: np.ndarray, value) -> None:
    d = wrap_dim(dim, a.ndim)
    if index.dtype != np.int64:
        raise IndexError(FILL_INDEX_DTYPE)
    if index.ndim > 1:
        raise RuntimeError(FILL_INDEX_RANK)
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise RuntimeError(FILL_VALUE_RANK.format(value.ndim))
        value = value[()]
    size = a.shape[d] if a.ndim else 1
    idx = index.reshape(-1)
    bad = (idx < -size) | (idx >= size)
    if bad.any():
        raise IndexError(FILL_RANGE.format(int(idx[bad][0]), d, size))
    view = _along(a, d)
    view[idx] = np.asarray(value).astype(a.dtype)


def index_fill(a: np.ndarray, dim: int, index: np.ndarray, value) -> np.ndarray:
    out = copy_keeping_layout(a)
    index_fill_into(out, dim, index, value)
    return out


# --- index_copy ---------------------------------------------------------------------------------


def _check_index_copy(a, d, index, source) -> None:
    if index.ndim > 1:
        raise IndexError(COPY_INDEX_RANK.format(index.ndim))
    if index.dtype != np.int64:
        raise RuntimeError(COPY_INDEX_DTYPE.format(type_name(index.dtype)))
    if a.dtype != source.dtype:
        raise RuntimeError(COPY_DTYPE.format(type_name(a.dtype), type_name(source.dtype)))
    if source.ndim and a.ndim and source.ndim != a.ndim:
        raise IndexError(COPY_RANK.format(source.ndim, a.ndim))
    n_source = source.shape[d] if source.ndim else 1
    if index.size != n_source:
        raise IndexError(COPY_COUNT.format(index.size, n_source))
    # the shapes without dim d must agree (torch prints them as space-separated sizes)
    self_slice = a.shape[:d] + a.shape[d + 1:]
    source_slice = source.shape[:d] + source.shape[d + 1:]
    if self_slice != source_slice:
        raise RuntimeError(COPY_SLICE.format(" ".join(map(str, self_slice)), d,
                                             " ".join(map(str, source_slice))))
    size = a.shape[d] if a.ndim else 1
    idx = index.reshape(-1)
    bad = (idx < 0) | (idx >= size)
    if bad.any():
        raise IndexError(COPY_RANGE.format(int(idx[bad][0]), d, size))


def index_copy_into(a: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray) -> None:
    d = wrap_dim(dim, a.ndim)
    _check_index_copy(a, d, index, source)
    _along(a, d)[index.reshape(-1)] = _along(source, d if source.ndim else 0)


def index_copy(a: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray) -> np.ndarray:
    out = copy_keeping_layout(a)
    index_copy_into(out, dim, index, source)
    return out


# --- put ------------------------------------------------------------------------------------------


def put_into(a: np.ndarray, index: np.ndarray, source: np.ndarray, accumulate: bool) -> None:
    if index.dtype != np.int64:
        raise RuntimeError(PUT_INDEX_DTYPE.format(type_name(index.dtype)))
    if a.dtype != source.dtype:
        raise RuntimeError(PUT_DTYPE.format(type_name(a.dtype), type_name(source.dtype)))
    if index.size != source.size:
        raise IndexError(PUT_COUNT.format(source.size, index.size))
    n = a.size
    idx = index.reshape(-1)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(PUT_RANGE.format(int(idx[bad][0]), n))
    # positions count in row-major order, whatever a's layout: write through a flat copy
    # unless a is row-major already
    flat = a.reshape(-1) if a.flags.c_contiguous else a.flatten()
    values = source.reshape(-1)
    if accumulate:
        np.add.at(flat, idx, values)
    else:
        flat[idx] = values
    if not a.flags.c_contiguous:
        a[...] = flat.reshape(a.shape)


def put(a: np.ndarray, index: np.ndarray, source: np.ndarray, accumulate: bool) -> np.ndarray:
    out = copy_keeping_layout(a)
    put_into(out, index, source, accumulate)
    return out


# --- masked_scatter -------------------------------------------------------------------------------


def _check_masked_scatter(a, mask, source) -> None:
    if mask.dtype != np.bool_:
        raise RuntimeError(MASK_DTYPE.format(type_name(mask.dtype)))
    if a.dtype != source.dtype:
        raise RuntimeError(SCATTER_DTYPE.format(type_name(a.dtype), type_name(source.dtype)))


def _scatter_masked(out: np.ndarray, mask: np.ndarray, source: np.ndarray) -> None:
    """The mask's true positions of out, in row-major order, take source's first elements."""
    count = int(np.count_nonzero(mask))
    if count > source.size:
        raise RuntimeError(SCATTER_COUNT)
    out[mask] = source.reshape(-1)[:count]


def masked_scatter(a: np.ndarray, mask: np.ndarray, source: np.ndarray) -> np.ndarray:
    _check_masked_scatter(a, mask, source)
    try:
        shape = np.broadcast_shapes(a.shape, mask.shape)
    except ValueError:
        error = broadcast_error(a.shape, mask.shape)
        raise (error or ValueError("shapes do not broadcast")) from None
    out = np.array(np.broadcast_to(a, shape), order="C", copy=True)
    _scatter_masked(out, np.broadcast_to(mask, shape), source)
    return out


def masked_scatter_into(a: np.ndarray, mask: np.ndarray, source: np.ndarray) -> None:
    _check_masked_scatter(a, mask, source)
    if mask.ndim > a.ndim:  # torch names the mask's type in expand's message
        raise RuntimeError(MASK_EXPAND.format(list(mask.shape), list(a.shape), a.ndim, mask.ndim))
    _scatter_masked(a, _expand_forward(mask, a.shape), source)
