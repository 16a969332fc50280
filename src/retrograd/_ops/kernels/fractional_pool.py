"""NumPy kernel of fractional max pooling (2-d and 3-d).

Each (batch, channel) plane draws its own pseudo-random window starts from its row of
random_samples (one sample per spatial dimension, in torch's order: the last spatial dimension
first for 2-d, the first first for 3-d). The starts are computed in the input's dtype, as
torch's kernel does, so that given the same samples the windows, values and indices are
torch's exactly. Indices are flat within a plane.
"""

from __future__ import annotations

from math import prod

import numpy as np


def window_starts(samples: np.ndarray, in_size: int, out_size: int, pool: int) -> np.ndarray:
    """Window starts (samples' shape + (out_size,)): int((i + u) a) - int(u a) for
    a = (in - pool) / (out - 1), the last start at in - pool."""
    starts = np.empty(samples.shape + (out_size,), dtype=np.int64)
    if out_size == 0:
        return starts
    dt = samples.dtype.type
    if out_size > 1:
        alpha = dt(in_size - pool) / dt(out_size - 1)
        i = np.arange(out_size - 1).astype(samples.dtype)
        with np.errstate(invalid="ignore"):
            first = (samples[..., None] + i) * alpha
            base = samples[..., None] * alpha
        starts[..., :-1] = first.astype(np.int64) - base.astype(np.int64)
    starts[..., -1] = in_size - pool
    return starts


def _sample_axes(nsp: int) -> list:
    """Which sample column drives each spatial dimension."""
    return [1, 0] if nsp == 2 else [0, 1, 2]


def fractional_max_pool(x: np.ndarray, kernel: list, out_size: list,
                        samples: np.ndarray) -> tuple:
    """(values, int64 indices) for x of shape (N, C, *spatial)."""
    nsp = len(kernel)
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    plane_samples = samples[:n]  # (N, C, nsp); extra rows are not used
    axes = _sample_axes(nsp)
    # per dimension: (N, C, out_d, k_d) positions of the window elements
    positions = []
    for d in range(nsp):
        start = window_starts(np.ascontiguousarray(plane_samples[..., axes[d]]), spatial[d],
                              out_size[d], kernel[d])
        positions.append(start[..., None] + np.arange(kernel[d]))
    # flat in-plane index of every window element: (N, C, *out, *k)
    flat = np.zeros((n, c) + tuple(out_size) + tuple(kernel), dtype=np.int64)
    stride = 1
    for d in range(nsp - 1, -1, -1):
        shape = [n, c] + [1] * (2 * nsp)
        shape[2 + d] = out_size[d]
        shape[2 + nsp + d] = kernel[d]
        flat = flat + positions[d].reshape(shape) * stride
        stride *= spatial[d]
    window = int(prod(kernel))
    flat = flat.reshape((n, c) + tuple(out_size) + (window,))
    plane = x.reshape(n, c, -1)
    if window == 0:
        # an empty window: torch leaves -inf at the window's start
        starts = np.zeros((n, c) + tuple(out_size), dtype=np.int64)
        stride = 1
        for d in range(nsp - 1, -1, -1):
            shape = [n, c] + [1] * nsp
            shape[2 + d] = out_size[d]
            st = window_starts(np.ascontiguousarray(plane_samples[..., axes[d]]),
                               spatial[d], out_size[d], kernel[d])
            starts = starts + st.reshape(shape) * stride
            stride *= spatial[d]
        return np.full(starts.shape, -np.inf, dtype=x.dtype), starts
    vals = np.take_along_axis(plane, flat.reshape(n, c, -1), axis=2).reshape(flat.shape)
    # the first maximum, or the last NaN (a NaN always replaces what was kept)
    pick = np.argmax(vals, axis=-1)
    nan = np.isnan(vals)
    if nan.any():
        last_nan = window - 1 - np.argmax(nan[..., ::-1], axis=-1)
        pick = np.where(nan.any(axis=-1), last_nan, pick)
    idx = np.take_along_axis(flat, pick[..., None], axis=-1)[..., 0]
    out = np.take_along_axis(vals, pick[..., None], axis=-1)[..., 0]
    return out, idx
