"""tensor_split and its dim-named forms hsplit, vsplit, dsplit: pieces of a tensor as slices.

All are torch composites of slice (SliceBackward0 views). Piece boundaries follow Python's
slicing: negative indices count from the end and out-of-range ones are clamped.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from retrograd import _dtype as D
from retrograd._dims import wrap_dim
from retrograd._numpy_names import numpy_names
from retrograd._ops.registry import register
from retrograd._ops.shape import slice_op
from retrograd._tensor import Tensor

NOT_1D = ("tensor_split expected at least a 1-dimensional tensor, but got a tensor with {} "
          "dims")
NO_SECTIONS = "number of sections must be larger than 0, got {}"
TENSOR_RANK = ("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
               "one-dimensional tensor, but got a tensor with {} dims")
TENSOR_DTYPE = ("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                "{}")
SPLIT_RANK = ("torch.{} requires a tensor with at least {} dimension, but got a tensor with {} "
              "dimensions!")
NOT_DIVISIBLE = ("torch.{} attempted to split along dimension {}, but the size of the dimension "
                 "{} is not divisible by the split_size {}!")


def _by_sections(input: Tensor, sections: int, d: int) -> tuple:
    if sections <= 0:
        raise RuntimeError(NO_SECTIONS.format(sections))
    size = input.shape[d]
    small, extra = divmod(size, sections)
    pieces, start = [], 0
    for k in range(sections):
        length = small + (1 if k < extra else 0)
        pieces.append(slice_op(input, d, start, start + length, 1))
        start += length
    return tuple(pieces)


def _by_indices(input: Tensor, indices, d: int) -> tuple:
    bounds = [None, *(int(i) for i in indices), None]
    return tuple(slice_op(input, d, bounds[k], bounds[k + 1], 1)
                 for k in range(len(bounds) - 1))


@numpy_names
def tensor_split(input: Tensor, indices_or_sections=None, dim: int = 0, *, sections=None,
                 indices=None, tensor_indices_or_sections=None) -> tuple:
    """torch.tensor_split: `sections` near-equal pieces (the first ones one longer), or the
    pieces between the given indices; a tensor argument is a 0-d count or a 1-d index list."""
    split = next(a for a in (indices_or_sections, sections, indices, tensor_indices_or_sections,
                             0) if a is not None)
    if input.dim() == 0:
        raise RuntimeError(NOT_1D.format(0))
    d = wrap_dim(dim, input.dim())
    if isinstance(split, Tensor):
        if split.dim() > 1:
            raise RuntimeError(TENSOR_RANK.format(split.dim()))
        if split._data.dtype != np.int64:
            raise RuntimeError(TENSOR_DTYPE.format(D.legacy_name(split.dtype)))
        values = split._data
        return _by_sections(input, int(values), d) if values.ndim == 0 else \
            _by_indices(input, values.tolist(), d)
    if isinstance(split, int):
        return _by_sections(input, split, d)
    return _by_indices(input, split, d)


def _named_split(name: str, min_rank: int, dim_of: Callable) -> Callable:
    def split(input: Tensor, indices_or_sections) -> tuple:
        if input.dim() < min_rank:
            raise RuntimeError(SPLIT_RANK.format(name, min_rank, input.dim()))
        d = dim_of(input)
        if isinstance(indices_or_sections, int):
            size = input.shape[d]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(NOT_DIVISIBLE.format(name, d, size, indices_or_sections))
        return tensor_split(input, indices_or_sections, d)

    split.__name__ = split.__qualname__ = name
    split.__doc__ = f"torch.{name}: tensor_split along dim {dim_of.__doc__}."
    return split


def _h_dim(t: Tensor) -> int:
    """1 (0 for a vector)"""
    return 0 if t.dim() == 1 else 1


def _v_dim(t: Tensor) -> int:
    """0"""
    return 0


def _d_dim(t: Tensor) -> int:
    """2"""
    return 2


register("tensor_split", tensor_split, method=True)
for _name, _rank, _dim in (("hsplit", 1, _h_dim), ("vsplit", 2, _v_dim), ("dsplit", 3, _d_dim)):
    register(_name, _named_split(_name, _rank, _dim), method=True)
