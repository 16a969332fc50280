"""searchsorted and bucketize: where values would be inserted into sorted boundaries.

Not differentiable (integer outputs). A 1-d boundary tensor applies to every value; an N-d one
holds one sorted row per leading index of the values. `right` (or side="right") returns the
position after any equal boundaries, as NumPy's side="right" does.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor, _wrap

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


def _searchsorted_forward(seq, values, out_int32, right, side, sorter):
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


_searchsorted = op("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, "
                   "bool out_int32=False, bool right=False, str? side=None, "
                   "Tensor? sorter=None) -> Tensor", _searchsorted_forward,
                   function=False, method=False)


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None,
                 out: Tensor | None = None) -> Tensor:
    if not isinstance(input, Tensor):  # the Scalar overload: a 0-d result
        input = _wrap(np.asarray(input, dtype=sorted_sequence._data.dtype))
    result = _searchsorted(sorted_sequence, input, out_int32=out_int32, right=right,
                           side=side, sorter=sorter)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out: Tensor | None = None) -> Tensor:
    if boundaries.dim() != 1:
        raise RuntimeError(BOUNDARIES_1D.format(boundaries.dim()))
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


register("searchsorted", searchsorted)
register("bucketize", bucketize)
