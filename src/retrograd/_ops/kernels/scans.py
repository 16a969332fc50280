"""NumPy kernels of the running scans cummax, cummin and logcumsumexp: functions on plain
arrays. No Tensor here: retrograd._ops.scans declares the ops on these.

Ties and NaN follow torch: an element equal to the running extreme takes its place (the index
moves to the later one), and a NaN wins over every number, so after the first NaN the values
are NaN and the index moves to each later NaN.
"""

from __future__ import annotations

import numpy as np

from retrograd._dims import wrap_dim
from retrograd._ops.kernels.reduction import cumulative
from retrograd._ops.layout import not_implemented


def _running_extreme(ufunc, name: str):
    def forward(a: np.ndarray, dim: int) -> tuple:
        # torch checks dim only where it scans: a scalar takes -1 or 0, no elements any dim
        if a.ndim == 0:
            if dim not in (-1, 0):
                raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got "
                                 f"{dim}")
            return a.copy(), np.zeros((), np.int64)
        values = np.empty(a.shape, a.dtype)
        indices = np.empty(a.shape, np.int64)
        if a.size == 0:
            return values, indices
        d = wrap_dim(dim, a.ndim)
        wide = a.astype(np.float32) if a.dtype.kind == "V" else a  # bfloat16 / float8
        running = values if wide is a else np.empty(a.shape, wide.dtype)
        ufunc.accumulate(wide, axis=d, out=running)
        if running is not values:
            values[...] = running
        # the index moves wherever the element is (or ties) the running extreme
        at_extreme = wide == running
        if wide.dtype.kind == "f":
            at_extreme |= np.isnan(wide) & np.isnan(running)
        shape = [1] * a.ndim
        shape[d] = a.shape[d]
        positions = np.arange(a.shape[d], dtype=np.int64).reshape(shape)
        np.maximum.accumulate(np.where(at_extreme, positions, 0), axis=d, out=indices)
        return values, indices

    return forward


cummax = _running_extreme(np.maximum, "cummax")
cummin = _running_extreme(np.minimum, "cummin")


def logcumsumexp(a: np.ndarray, dim: int) -> np.ndarray:
    """log(cumsum(exp(a))) along dim, without overflow: logaddexp accumulates pairwise."""
    d = wrap_dim(dim, a.ndim)
    if a.dtype.kind not in "fV":
        raise not_implemented("logcumsumexp_out_cpu", a.dtype)
    if a.ndim == 0:
        return a.copy()
    with np.errstate(invalid="ignore"):  # NaN in, NaN out, silently as in torch
        # in torch's accumulation type (NOTE [Running scans])
        return cumulative(np.logaddexp, a, d, np.empty(a.shape, a.dtype))
