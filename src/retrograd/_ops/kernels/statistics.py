"""NumPy kernel of mode: functions on plain arrays. No Tensor here: retrograd._ops.statistics
declares the op on it.

torch's mode sorts each row by value (std::sort, not stable), walks the runs of equal values and
keeps the first run longer than every earlier one: the smallest of the most frequent values, at
the index its last element came from. A stable sort gives the same order wherever std::sort's
is stable too (rows of at most 16, which it insertion-sorts) or where no ties matter (every
value once); other rows, and rows with NaN (each NaN a run of its own, whose comparisons unsettle
the sort), replay std::sort (kernels/std_sort.py).
"""

from __future__ import annotations

import numpy as np

from retrograd._dims import wrap_dim
from retrograd._ops.kernels.std_sort import std_sort_order
from retrograd._ops.layout import c_layout

MODE_EMPTY = "mode(): Expected reduction dim {} to have non-zero size."


def mode(a: np.ndarray, dim: int, keepdim: bool) -> tuple:
    d = wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    n = a.shape[d]
    if n == 0:
        raise IndexError(MODE_EMPTY.format(d))
    rows = np.moveaxis(a, d, -1).reshape(-1, n)
    keys = rows.astype(np.float32) if rows.dtype.kind == "V" else rows  # bfloat16 / float8
    order = np.argsort(keys, axis=1, kind="stable")
    ordered = np.take_along_axis(keys, order, 1)
    nan = np.isnan(keys).any(axis=1) if keys.dtype.kind == "f" else np.zeros(len(keys), bool)
    if n > 16:
        # rows with a value twice: std::sort's order of equal values is its own
        tied = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
        nan |= tied
    for r in np.flatnonzero(nan):
        order[r] = std_sort_order(keys[r].tolist())
        ordered[r] = keys[r][order[r]]
    values, indices = _longest_runs(ordered, order)
    shape = a.shape[:d] + a.shape[d + 1:]
    values = values.astype(a.dtype).reshape(shape)
    indices = indices.reshape(shape)
    if keepdim:
        values, indices = np.expand_dims(values, d), np.expand_dims(indices, d)
    return c_layout(values), c_layout(indices)


def _longest_runs(ordered: np.ndarray, order: np.ndarray) -> tuple:
    """Per row: the value and original index at the end of the first longest run of equal
    neighbours (NaN equals nothing, so each NaN is a run of one)."""
    rows, n = ordered.shape
    ends = np.ones((rows, n), bool)
    ends[:, :-1] = ordered[:, 1:] != ordered[:, :-1]
    position = np.arange(n)
    # start of the run each position belongs to: one past the previous run's end
    last_end = np.where(ends, position, -1)
    previous_end = np.full((rows, n), -1)
    previous_end[:, 1:] = np.maximum.accumulate(last_end, axis=1)[:, :-1]
    length = np.where(ends, position - previous_end, 0)
    best = np.argmax(length, axis=1)  # the first run of the greatest length
    pick = np.arange(rows)
    return ordered[pick, best], order[pick, best].astype(np.int64)
