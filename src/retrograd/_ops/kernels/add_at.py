"""np.add.at through flat positions: the accumulating writes of index_put_, index_add_,
scatter_add_ and scatter_reduce, and so the backward of indexing, gather and grid_sample.

NumPy's ufunc.at is fast for a 1-d array indexed by one integer array and several times slower
for a tuple of index arrays or for whole rows (measured 5.5x for 500 rows of 256 into a 64x256
array). For a C-contiguous array and a key of full slices around one run of integer arrays (the
form these ops produce), `add_at` computes each written element's flat position and adds
through the fast path. The additions are the same, in the same order: for every element, the
values that land on it are added one at a time in the order of their positions in the key, as
np.add.at adds them (and as torch's accumulating CPU kernels do). Any other key, an index out
of range (np.add.at raises its own error) or a non-contiguous array take np.add.at itself.
"""

from __future__ import annotations

import math

import numpy as np

_FULL = slice(None)


def _run_of_arrays(key: tuple, ndim: int) -> tuple | None:
    """(first, count) of the integer arrays in a key of full slices around one run of them,
    or None for any other key."""
    at = [i for i, k in enumerate(key) if type(k) is np.ndarray]
    if not at or len(key) > ndim or at[-1] - at[0] + 1 != len(at):
        return None
    for k in key:
        if type(k) is np.ndarray:
            if k.dtype.kind not in "iu":
                return None
        elif not (type(k) is slice and k == _FULL):
            return None
    return at[0], len(at)


def flat_positions(a: np.ndarray, first: int, arrays: tuple) -> np.ndarray | None:
    """Flat positions of a[(:,) * first + arrays + (:, ...)] in C order, or None when an index
    is out of range. Each index array is checked and scaled at its own size; only their sum
    broadcasts to the full selection."""
    shape = a.shape
    strides = [1] * len(shape)  # C strides in elements
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    lead = None
    for j, k in enumerate(arrays):
        dim = shape[first + j]
        if k.size:
            lo, hi = int(k.min()), int(k.max())
            if lo < -dim or hi >= dim:
                return None
            if lo < 0:
                k = np.where(k < 0, k + dim, k)
        term = np.multiply(k, strides[first + j], dtype=np.intp)
        lead = term if lead is None else lead + term
    assert lead is not None
    full = np.broadcast_shapes(*(k.shape for k in arrays))
    if lead.shape != full:
        lead = np.broadcast_to(lead, full)
    n_outer = math.prod(shape[:first])
    n_inner = math.prod(shape[first + len(arrays):])
    if n_outer > 1:
        outer = np.arange(0, n_outer * strides[first - 1], strides[first - 1])
        lead = outer.reshape((-1,) + (1,) * lead.ndim) + lead
    if n_inner > 1:
        lead = lead[..., None] + np.arange(n_inner)
    return lead.reshape(-1)


def add_at(a: np.ndarray, key, values) -> None:
    """np.add.at(a, key, values), through flat positions where that is NumPy's fast path."""
    ufunc_at(np.add, a, key, values)


def ufunc_at(ufunc: np.ufunc, a: np.ndarray, key, values) -> None:
    """ufunc.at(a, key, values) (add, multiply, maximum, minimum), through flat positions
    where that is NumPy's fast path."""
    if type(key) is not tuple:
        key = (key,)
    if a.ndim == 1:  # NumPy's own fast path already
        ufunc.at(a, key, values)
        return
    run = _run_of_arrays(key, a.ndim) if a.flags.c_contiguous and a.size else None
    if run is not None:
        first, count = run
        arrays = key[first:first + count]
        flat = flat_positions(a, first, arrays)
        if flat is not None:
            out_shape = (a.shape[:first] + np.broadcast_shapes(*(k.shape for k in arrays))
                         + a.shape[first + count:])
            vals = np.asarray(values)
            ufunc.at(a.reshape(-1), flat, np.broadcast_to(vals, out_shape).reshape(-1))
            return
    ufunc.at(a, key, values)
