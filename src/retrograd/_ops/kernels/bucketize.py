"""NumPy kernels of searchsorted and bucketize on plain arrays (no Tensor here): the side
argument's checks, row-wise searches, torch's messages. retrograd._ops.bucketize declares the ops.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.layout import not_implemented

SHAPES = ("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
          "dimensions of boundaries tensor and input value tensor must match, but we got "
          "boundaries tensor {} and input value tensor {}")
SIDE = "torch.searchsorted(): side can only be 'left' or 'right' but got {}"
OPPOSITE = ("torch.searchsorted(): side and right can't be set to opposites, got side of left "
            "while right was True")
SORTER_SHAPE = ("torch.searchsorted(): boundary and sorter must have the same size, but got "
                "boundary tensor {}and got sorter tensor {}")
BOUNDARIES_1D = "boundaries tensor must be 1 dimension, but got dim({})"


def _side(right: bool, side) -> str:
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(SIDE.format(side))
        if side == "left" and right:
            raise RuntimeError(OPPOSITE)
        return side
    return "right" if right else "left"


def searchsorted(seq, values, out_int32, right, side, sorter):
    if seq.dtype.kind == "b" or getattr(values, "dtype", None) == np.bool_:
        raise not_implemented("searchsorted_out_cpu", np.dtype(np.bool_))
    where = _side(right, side)
    if sorter is not None:
        if sorter.shape != seq.shape:
            raise RuntimeError(SORTER_SHAPE.format(list(seq.shape), list(sorter.shape)))
        seq = np.take_along_axis(seq, sorter, axis=-1)
    dtype = np.int32 if out_int32 else np.int64
    if seq.ndim <= 1:
        return np.searchsorted(seq.reshape(-1), values, side=where).astype(dtype)
    if values.ndim == 0 or seq.shape[:-1] != values.shape[:-1]:
        raise RuntimeError(SHAPES.format(list(seq.shape), list(values.shape)))
    rows = seq.reshape(-1, seq.shape[-1])
    vals = values.reshape(rows.shape[0], -1)
    out = np.empty(vals.shape, dtype)
    for i in range(rows.shape[0]):
        out[i] = np.searchsorted(rows[i], vals[i], side=where)
    return out.reshape(values.shape)


def bucketize(values, boundaries, out_int32, right):
    """The index of the bucket of each value among 1-d sorted `boundaries`."""
    if boundaries.ndim != 1:
        raise RuntimeError(BOUNDARIES_1D.format(boundaries.ndim))
    return searchsorted(boundaries, values, out_int32, right, None, None)
