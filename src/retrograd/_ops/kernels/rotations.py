"""NumPy kernels of rot90 and trace (plain arrays in, plain arrays out)."""

from __future__ import annotations

import numpy as np

from retrograd._dims import wrap_dim
from retrograd._ops.kernels.shape import _flip_forward

ROT_DIMS = "expected total rotation dims == 2, but got dims = {}"
ROT_RANK = "expected total dims >= 2, but got total dims = {}"
ROT_SAME = "expected rotation dims to be different, but got dim0 = {} and dim1 = {}"
TRACE_RANK = "trace: expected a matrix, but got tensor with dim {}"
TRACE_BOOL = "\"trace\" not implemented for 'Bool'"


def rot90(a: np.ndarray, k: int, dims) -> np.ndarray:
    """a turned k quarter turns from dims[0] towards dims[1], laid out as torch lays it out:
    a flip copy, transposed for odd turns (so those results are not row-major)."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(ROT_DIMS.format(len(dims)))
    if a.ndim < 2:
        raise RuntimeError(ROT_RANK.format(a.ndim))
    d0, d1 = wrap_dim(dims[0], a.ndim), wrap_dim(dims[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(ROT_SAME.format(d0, d1))
    turns = k % 4
    if turns == 1:
        return _flip_forward(a, [d1]).swapaxes(d0, d1)
    if turns == 2:
        return _flip_forward(a, [d0, d1])
    if turns == 3:
        return _flip_forward(a, [d0]).swapaxes(d0, d1)
    return np.array(a, order="C")  # a row-major copy, whatever the input's layout


def trace(a: np.ndarray) -> np.ndarray:
    if a.ndim != 2:
        raise RuntimeError(TRACE_RANK.format(a.ndim))
    if a.dtype == np.bool_:
        raise NotImplementedError(TRACE_BOOL)
    # integers sum to int64, as torch's sum does
    dtype = np.int64 if a.dtype.kind in "iu" else a.dtype
    return np.asarray(np.trace(a, dtype=dtype))
