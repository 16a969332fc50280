"""searchsorted and bucketize: where values would be inserted into sorted boundaries.

Not differentiable (integer outputs). A 1-d boundary tensor applies to every value; an N-d one
holds one sorted row per leading index of the values. `right` (or side="right") returns the
position after any equal boundaries, as NumPy's side="right" does.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels import bucketize as K
from retrograd._ops.overloads import composite
from retrograd._ops.registry import op
from retrograd._tensor import Tensor, _wrap

_searchsorted = op("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, "
                   "bool out_int32=False, bool right=False, str? side=None, "
                   "Tensor? sorter=None) -> Tensor", K.searchsorted, method=False)


def _scalar_as_values(value, sorted_sequence: Tensor) -> Tensor:
    """The Scalar overloads' number as a 0-d tensor of the boundaries' dtype (a 0-d result)."""
    return _wrap(np.asarray(value, dtype=sorted_sequence._data.dtype))


def _searchsorted_scalar(sorted_sequence: Tensor, self, *, out_int32: bool = False,
                         right: bool = False, side: str | None = None,
                         sorter: Tensor | None = None, out: Tensor | None = None) -> Tensor:
    values = _scalar_as_values(self, sorted_sequence)
    return _searchsorted(sorted_sequence, values, out_int32=out_int32, right=right, side=side,
                         sorter=sorter, out=out)


composite("searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, "
          "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor",
          _searchsorted_scalar, method=False)

op("bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) "
   "-> Tensor", K.bucketize, method=False)


def _bucketize_scalar(self, boundaries: Tensor, *, out_int32: bool = False,
                      right: bool = False) -> Tensor:
    if boundaries.dim() != 1:
        raise RuntimeError(K.BOUNDARIES_1D.format(boundaries.dim()))
    return _searchsorted(boundaries, _scalar_as_values(self, boundaries), out_int32=out_int32,
                         right=right)


composite("bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, "
          "bool right=False) -> Tensor", _bucketize_scalar, method=False)
