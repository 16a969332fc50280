"""NumPy kernels of the *_scatter ops: a copy of self with one view of it (a diagonal, a
selected slice, a strided slice, an as_strided window) overwritten by src."""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels.shape import (
    _as_strided_rel_forward,
    _diagonal_forward,
    _select_forward,
    _slice_forward,
)

SRC_SIZE = "expected src to have a size equal to the slice of self. src size = {}, slice size = {}"
OUT_OF_BOUNDS = ("setStorage: sizes {}, strides {}, storage offset {}, and itemsize {} requiring a "
                 "storage size of {} are out of bounds for storage of size {}")


def _write(out: np.ndarray, view: np.ndarray, src: np.ndarray) -> np.ndarray:
    if view.shape != src.shape:
        raise RuntimeError(SRC_SIZE.format(list(src.shape), list(view.shape)))
    np.copyto(view, src, casting="unsafe")
    return out


def _fresh(a: np.ndarray) -> np.ndarray:
    return np.array(a, order="K", copy=True)  # self's layout, as torch's clone keeps it


def diagonal_scatter(a, src, offset, dim1, dim2):
    out = _fresh(a)
    return _write(out, _diagonal_forward(out, offset, dim1, dim2), src)


def select_scatter(a, src, dim, index):
    out = _fresh(a)
    return _write(out, _select_forward(out, dim, index), src)


def slice_scatter(a, src, dim, start, end, step):
    out = _fresh(a)
    return _write(out, _slice_forward(out, dim, start, end, step), src)


def as_strided_scatter(a, src, size, stride, storage_offset):
    """The window counts from the copy's first element (a fresh copy has storage offset 0)."""
    out = _fresh(a)
    size, stride = tuple(size), tuple(stride)
    offset = storage_offset or 0
    needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    if needed > out.size:
        item = out.itemsize
        raise RuntimeError(OUT_OF_BOUNDS.format(list(size), list(stride), offset, item,
                                                needed * item, out.size * item))
    return _write(out, _as_strided_rel_forward(out, size, stride, offset), src)
