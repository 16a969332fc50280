"""nonzero and argwhere: the indices of the non-zero elements, one row per element.

Both give an int64 (n, ndim) tensor laid out column by column (torch's strides (1, n)); the
number of rows depends on the values, so vmap refuses them (batch_rules.DYNAMIC). Neither has a
gradient.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor


def _nonzero_forward(a: np.ndarray) -> np.ndarray:
    if a.ndim == 0:
        # a 0-d tensor has one element and no dims: one row of no columns, or none
        return np.zeros((1 if a.item() else 0, 0), np.int64)
    columns = np.stack(np.nonzero(a)).astype(np.int64, copy=False)
    return columns.T  # (n, ndim), each column contiguous as torch lays it out


_nonzero = op("nonzero(Tensor self) -> Tensor", _nonzero_forward,
              function=False, method=False)
argwhere = op("argwhere(Tensor self) -> Tensor", _nonzero_forward)


def nonzero(input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False):
    """torch.nonzero: the (n, ndim) index rows, or with as_tuple one index vector per dim (a
    0-d input counts as 1-d there, as in torch)."""
    if not as_tuple:
        return _nonzero(input) if out is None else _nonzero(input, out=out)
    if input.dim() == 0:
        input = input.reshape(1)
    return tuple(_nonzero(input).unbind(1))


def _nonzero_method(self: Tensor, *, as_tuple: bool = False):
    return nonzero(self, as_tuple=as_tuple)


register("nonzero", nonzero)
register_method("nonzero", _nonzero_method)
