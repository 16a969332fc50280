"""NumPy kernels of distances: p-norms of differences and pdist's forward. retrograd._ops.distance
declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np


def _pairs(n: int) -> tuple:
    """Row indices (i, j), i < j, in the order of pdist's output."""
    return np.triu_indices(n, 1)


def _p_norm(diff: np.ndarray, p: float) -> np.ndarray:
    a = np.abs(diff)
    if p == 0:
        return np.count_nonzero(a, axis=-1).astype(diff.dtype)
    if p == np.inf:
        return a.max(axis=-1, initial=0)
    if p == 1:
        return a.sum(axis=-1)
    if p == 2:
        return np.sqrt(np.einsum("...k,...k->...", diff, diff))
    return (a ** p).sum(axis=-1) ** (1 / p)


def _pdist_forward_kernel(a, p):
    i, j = _pairs(a.shape[0])
    return np.ascontiguousarray(_p_norm(a[i] - a[j], p), dtype=a.dtype)
