"""torch.diff: n-th forward differences along a dim, with optional values put before / after.

A torch composite: the optional tensors are concatenated, then each order subtracts two
overlapping slices (SubBackward0; logical_xor for bool tensors).
"""

from __future__ import annotations

import numpy as np

from retrograd._dims import wrap_dim
from retrograd._numpy_names import numpy_names
from retrograd._ops.copy import copy_into_new
from retrograd._ops.registry import register
from retrograd._ops.shape import cat
from retrograd._tensor import Tensor

NOT_1D = "diff expects input to be at least one-dimensional"
NEGATIVE_ORDER = "order must be non-negative but got {}"
EXTRA_RANK = "diff expects prepend or append to be the same dimension as input"
EXTRA_SHAPE = ("diff expects the shape of tensor to prepend or append to match that of input "
               "except along the differencing dimension; input.size({}) = {}, but got "
               "tensor.size({}) = {}")


def _check_extra(input: Tensor, extra: Tensor | None, dim: int, name: str) -> None:
    if extra is None:
        return
    if not isinstance(extra, Tensor):
        raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(extra).__name__}")
    if extra.dim() != input.dim():
        raise RuntimeError(EXTRA_RANK)
    for k in range(input.dim()):
        if k != dim and extra.shape[k] != input.shape[k]:
            raise RuntimeError(EXTRA_SHAPE.format(k, input.shape[k], k, extra.shape[k]))


@numpy_names
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    if input.dim() == 0:
        raise RuntimeError(NOT_1D)
    if n < 0:
        raise RuntimeError(NEGATIVE_ORDER.format(n))
    d = wrap_dim(dim, input.dim())
    _check_extra(input, prepend, d, "prepend")
    _check_extra(input, append, d, "append")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    if n == 0:
        return x if len(parts) > 1 else copy_into_new(input, np.empty_like(input._data))
    is_bool = x._data.dtype.kind == "b"
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        later, earlier = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = later.logical_xor(earlier) if is_bool else later - earlier
    return x


register("diff", diff, method=True)
