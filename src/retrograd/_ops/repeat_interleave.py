"""repeat_interleave: each element (or slice along a dim) repeated in place, k times or by a
per-element count.

With an int count it is torch's composite of unsqueeze, expand, a contiguous clone and a
flattening view (ViewBackward0); with a tensor of counts it is index_select at the repeated
positions (IndexSelectBackward0). Given only a tensor of counts it returns those positions.
"""

from __future__ import annotations

import numpy as np

from retrograd._dims import wrap_dim
from retrograd._memory_format import contiguous_format
from retrograd._numpy_names import numpy_names
from retrograd._ops.indexing import index_select
from retrograd._ops.layout import not_implemented
from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor, _wrap

NEGATIVE_INT = "Repeats must be non-negative"
NEGATIVE_COUNT = "repeats can not be negative"
COUNTS_RANK = "repeats must be 0-dim or 1-dim tensor"
COUNTS_VECTOR = "repeat_interleave only accept 1D vector as repeat"
COUNTS_SIZE = ("repeats must have the same size as input along dim, but got repeats.size(0) = {} "
               "and input.size({}) = {}")
OUTPUT_SIZE = "allocated size does not match required size"


def _positions(repeats: np.ndarray, output_size) -> np.ndarray:
    """The index repeated `repeats[i]` times, for every i in order."""
    if repeats.ndim != 1:
        raise RuntimeError(COUNTS_VECTOR)
    if repeats.dtype.kind not in "iu" or repeats.dtype.itemsize < 4:
        raise not_implemented("repeat_interleave_cpu", repeats.dtype)
    if repeats.size and repeats.min() < 0:
        raise RuntimeError(NEGATIVE_COUNT)
    out = np.repeat(np.arange(repeats.shape[0], dtype=repeats.dtype), repeats)
    if output_size is not None and output_size != out.shape[0]:
        raise RuntimeError(OUTPUT_SIZE)
    return out


_positions_op = op("repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> "
                   "Tensor", _positions, function=False, method=False)


def _by_int(input: Tensor, repeats: int, dim, output_size) -> Tensor:
    if repeats < 0:
        raise RuntimeError(NEGATIVE_INT)
    x = input if dim is not None else input.flatten()
    d = wrap_dim(0 if dim is None else dim, input.dim())
    shape = list(x.shape)
    shape.insert(d + 1, repeats)
    spread = x.unsqueeze(d + 1).expand(shape).clone(memory_format=contiguous_format)
    if output_size is not None and output_size != shape[d] * repeats:
        raise RuntimeError(OUTPUT_SIZE)
    return spread.flatten(d, d + 1)


def _by_tensor(input: Tensor, repeats: Tensor, dim, output_size) -> Tensor:
    if repeats.dim() > 1:
        raise RuntimeError(COUNTS_RANK)
    x = input if dim is not None else input.flatten()
    d = wrap_dim(0 if dim is None else dim, x.dim())
    n = x.shape[d] if x.dim() else 1
    counts = repeats._data.reshape(-1)
    if counts.shape[0] == 1 and n != 1:
        counts = np.broadcast_to(counts, (n,))
    elif counts.shape[0] != n:
        raise RuntimeError(COUNTS_SIZE.format(counts.shape[0], d, n))
    positions = _positions_op(_wrap(np.ascontiguousarray(counts)), output_size=output_size)
    return index_select(x, d, positions)


@numpy_names
def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    if repeats is None:  # repeat_interleave(counts): the repeated positions themselves
        return _positions_op(input, output_size=output_size)
    if isinstance(repeats, Tensor):
        return _by_tensor(input, repeats, dim, output_size)
    return _by_int(input, int(repeats), dim, output_size)


@numpy_names
def _method(self: Tensor, repeats=None, dim: int | None = None, *,
            output_size: int | None = None) -> Tensor:
    return repeat_interleave(self, repeats, dim, output_size=output_size)


register("repeat_interleave", repeat_interleave)
register_method("repeat_interleave", _method)
