"""NumPy kernels of cdist (p-norm distances between the rows of two batches of matrices), its
matrix-product form for p = 2, dist and renorm: functions on plain arrays. No Tensor here:
retrograd._ops.cdist and retrograd._ops.renorm declare the ops on these.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._ops.kernels.reduction import vector_norm


def cdist(x1: np.ndarray, x2: np.ndarray, p: float) -> np.ndarray:
    """dist[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p, batch dims broadcast; from the
    differences, in the inputs' dtype, as torch's direct kernel."""
    batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    r1, r2, cols = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    shape = batch + (r1, r2)
    if r1 == 0 or r2 == 0 or math.prod(batch) == 0:
        return np.empty(shape, x1.dtype)
    if cols == 0:
        return np.zeros(shape, x1.dtype)
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    out = np.empty(shape, x1.dtype)
    out[...] = vector_norm(diff, p, -1, False, None)
    return out


def euclidean_dist(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """sqrt(max(|a|^2 - 2 a.b + |b|^2, 0)) with one matrix product, as torch's _euclidean_dist
    (faster for many rows, less exact for close rows)."""
    n1 = np.square(x1).sum(-1, keepdims=True)
    n2 = np.square(x2).sum(-1, keepdims=True)
    left = np.concatenate([x1 * x1.dtype.type(-2), n1, np.ones_like(n1)], -1)
    right = np.concatenate([x2, np.ones_like(n2), n2], -1)
    out = np.matmul(left, np.swapaxes(right, -1, -2))
    np.maximum(out, 0, out=out)
    return np.sqrt(out, out=out)


def renorm(a: np.ndarray, p: float, dim: int, maxnorm: float) -> np.ndarray:
    """Each slice along dim scaled to p-norm maxnorm where its norm is larger (by
    maxnorm / (norm + 1e-7), in float32 for 16-bit floats, as torch)."""
    others = tuple(d for d in range(a.ndim) if d != dim)
    acc = np.dtype(np.float32) if a.dtype.kind == "V" or a.dtype == np.float16 else a.dtype
    norm = vector_norm(a.astype(acc, copy=False), p, others, True, None)
    t = acc.type
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        factor = np.where(norm > t(maxnorm), t(maxnorm) / (norm + t(1e-7)), t(1))
    out = np.empty(a.shape, a.dtype)  # row-major whatever a's layout, as torch allocates it
    return np.multiply(a, factor.astype(a.dtype), out=out)
