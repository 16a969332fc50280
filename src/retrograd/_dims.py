"""Dimension arguments, shared by Tensor's methods and the ops: one wrap_dim for all."""

from __future__ import annotations

from retrograd import _errors as E


def wrap_dim(dim: int, ndim: int) -> int:
    """`dim` in [0, ndim) from torch's range [-ndim, ndim); a 0-d tensor takes 0 and -1."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(E.DIM_RANGE.format(-n, n - 1, dim))
    return dim % n
