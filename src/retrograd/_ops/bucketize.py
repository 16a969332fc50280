"""searchsorted and bucketize: where values would be inserted into sorted boundaries.

Not differentiable (integer outputs). A 1-d boundary tensor applies to every value; an N-d one
holds one sorted row per leading index of the values. `right` (or side="right") returns the
position after any equal boundaries, as NumPy's side="right" does.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels import bucketize as K
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor, _wrap

_searchsorted = op("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, "
                   "bool out_int32=False, bool right=False, str? side=None, "
                   "Tensor? sorter=None) -> Tensor", K.searchsorted,
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
        raise RuntimeError(K.BOUNDARIES_1D.format(boundaries.dim()))
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


register("searchsorted", searchsorted)
register("bucketize", bucketize)
