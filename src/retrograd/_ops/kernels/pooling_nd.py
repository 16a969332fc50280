"""NumPy kernels of pooling over any number of trailing spatial dims (3-d pooling, adaptive max
pooling): window maxima with torch's flat indices, their scatter/gather adjoints, window sums
and divisors of average pooling, adaptive windows. retrograd._ops.pooling3d and
retrograd._ops.adaptive_max_pool declare the ops. No Tensor here: plain arrays and numbers.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from retrograd._ops.kernels.conv import _offsets, _pad
from retrograd._ops.kernels.pooling import _check_pool_pad, _lowest, _window_max, pool_out_size


def flat_positions(coords: list, sizes: tuple) -> np.ndarray:
    """Row-major flat index over the spatial dims from per-dim coordinates."""
    flat = coords[0]
    for c, n in zip(coords[1:], sizes[1:]):
        flat = flat * n + c
    return np.asarray(flat, dtype=np.int64)


# --- max pooling ------------------------------------------------------------------------------


def max_pool_geometry(sizes: tuple, k, s, p, d, ceil: bool) -> tuple:
    """Output sizes and the (low, high) padding each spatial dim needs (high covers ceil_mode's
    partial windows)."""
    out, pads = [], []
    for n, ki, si, pi, di in zip(sizes, k, s, p, d):
        _check_pool_pad(ki, pi, si, di)
        o = pool_out_size(n, ki, pi, si, di, ceil)
        out.append(o)
        pads.append((pi, max(0, (o - 1) * si + di * (ki - 1) + 1 - n - pi)))
    return tuple(out), tuple(pads)


def window_max_nd(x: np.ndarray, k, s, p, d, out_sp: tuple, pads: tuple) -> tuple:
    """Max over every window and its flat index in the (unpadded) input plane, as torch scans
    (the first of equal maxima, the last NaN; a window holding only padding-level values
    points at its first position inside the input)."""
    nsp = len(k)
    values, arg = _window_max(_pad(x, pads, _lowest(x.dtype)), k, s, d, out_sp)
    offs = np.unravel_index(arg, tuple(k))
    sizes = x.shape[-nsp:]
    coords, bad = [], None
    for i in range(nsp):
        start = np.arange(out_sp[i]) * s[i] - p[i]
        shape = [1] * nsp
        shape[i] = out_sp[i]
        c = start.reshape(shape) + offs[i] * d[i]
        outside = (c < 0) | (c >= sizes[i])
        bad = outside if bad is None else bad | outside
        first = np.where(start < 0, start + (-start + d[i] - 1) // d[i] * d[i], start)
        coords.append((c, np.broadcast_to(first.reshape(shape), c.shape)))
    assert bad is not None  # at least one spatial dim
    fixed = [np.where(bad, first, c) for c, first in coords]
    return values, flat_positions(fixed, sizes)


def scatter_nd(grad: np.ndarray, indices: np.ndarray, self_size, nsp: int) -> np.ndarray:
    """Sum grad into a zero input-shaped array at the per-plane flat indices."""
    size = tuple(self_size)
    plane = prod(size[-nsp:])
    planes = prod(size[:-nsp])
    per = prod(indices.shape[-nsp:])
    offsets = (np.arange(planes, dtype=np.int64) * plane)[:, None]
    pos = (indices.reshape(planes, per) + offsets).ravel()
    total = np.bincount(pos, weights=grad.reshape(-1).astype(np.float64),
                        minlength=planes * plane)
    return total.astype(grad.dtype).reshape(size)


def gather_nd(x: np.ndarray, indices: np.ndarray, nsp: int) -> np.ndarray:
    planes = prod(x.shape[:-nsp])
    flat = x.reshape(planes, prod(x.shape[-nsp:]))
    idx = indices.reshape(planes, prod(indices.shape[-nsp:]))
    return np.take_along_axis(flat, idx, 1).reshape(indices.shape)


# --- average pooling --------------------------------------------------------------------------


def avg_divisor_nd(sizes, out_sp, k, s, p, count_include_pad, divisor_override):
    if divisor_override is not None:
        return divisor_override
    div = np.ones((), dtype=np.int64)
    for n, o, ki, si, pi in zip(sizes, out_sp, k, s, p):
        start = np.arange(o) * si - pi
        end = np.minimum(start + ki, n + pi)
        per = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        div = np.multiply.outer(div, per)
    return div


def window_sum_nd(xp: np.ndarray, k, s, out_sp) -> np.ndarray:
    acc = None
    for _, region in _offsets(k, (1,) * len(k), s, out_sp):
        part = xp[(Ellipsis,) + region]
        acc = part.copy() if acc is None else np.add(acc, part, out=acc)
    assert acc is not None  # a window has at least one offset
    return acc


def avg_pool_backward_nd(grad, self_size, k, s, p, count_include_pad, divisor_override):
    nsp = len(k)
    sizes = tuple(self_size[-nsp:])
    out_sp = grad.shape[-nsp:]
    div = avg_divisor_nd(sizes, out_sp, k, s, p, count_include_pad, divisor_override)
    g = grad / np.asarray(div, dtype=grad.dtype)
    hi = [max(0, (o - 1) * si + ki - n - pi) for o, si, ki, n, pi in zip(out_sp, s, k, sizes, p)]
    acc = np.zeros(grad.shape[:-nsp] + tuple(n + pi + h for n, pi, h in zip(sizes, p, hi)),
                   grad.dtype)
    for _, region in _offsets(k, (1,) * nsp, s, out_sp):
        acc[(Ellipsis,) + region] += g
    return acc[(Ellipsis,) + tuple(slice(pi, pi + n) for pi, n in zip(p, sizes))]


# --- adaptive windows -------------------------------------------------------------------------


def adaptive_bounds(n: int, out: int) -> tuple:
    """torch's adaptive window of output i: [floor(i*n/out), ceil((i+1)*n/out))."""
    i = np.arange(out)
    return (i * n) // out, -((-(i + 1) * n) // out)


def adaptive_matrix(n: int, out: int, dtype) -> np.ndarray:
    start, end = adaptive_bounds(n, out)
    cols = np.arange(n)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def adaptive_avg_nd(x: np.ndarray, output_size) -> np.ndarray:
    """Each spatial dim in turn averaged by its window matrix."""
    nsp = len(output_size)
    out = x
    for i, o in enumerate(output_size):
        axis = x.ndim - nsp + i
        m = adaptive_matrix(x.shape[axis], o, x.dtype)
        out = np.moveaxis(np.tensordot(out, m, axes=([axis], [1])), -1, axis)
    return np.ascontiguousarray(out)


def adaptive_avg_backward_nd(grad: np.ndarray, self_size, nsp: int) -> np.ndarray:
    out = grad
    for i in range(nsp):
        axis = grad.ndim - nsp + i
        m = adaptive_matrix(self_size[axis], grad.shape[axis], grad.dtype)
        out = np.moveaxis(np.tensordot(out, m, axes=([axis], [0])), -1, axis)
    return np.ascontiguousarray(out)


def adaptive_max_nd(x: np.ndarray, output_size) -> tuple:
    """Max over each adaptive window and its flat index in the input plane: every window is
    padded to the longest one with the dtype's lowest value, then reduced at once."""
    nsp = len(output_size)
    sizes = x.shape[-nsp:]
    if 0 in output_size:
        shape = x.shape[:-nsp] + tuple(output_size)
        return np.empty(shape, x.dtype), np.empty(shape, np.int64)
    index, valid, kmax = [], [], []
    for i, (n, o) in enumerate(zip(sizes, output_size)):
        start, end = adaptive_bounds(n, o)
        k = int((end - start).max()) if o else 0
        offs = np.arange(k)
        pos = start[:, None] + offs
        layout = [1] * (2 * nsp)
        layout[2 * i], layout[2 * i + 1] = o, k
        index.append(np.minimum(pos, n - 1).reshape(layout))
        valid.append((pos < end[:, None]).reshape(layout))
        kmax.append(k)
    win = x[(Ellipsis,) + tuple(index)]  # (..., o0, k0, o1, k1, ...)
    ok = valid[0]
    for v in valid[1:]:
        ok = ok & v
    lead = x.ndim - nsp
    order = list(range(lead)) + [lead + 2 * i for i in range(nsp)] + \
        [lead + 2 * i + 1 for i in range(nsp)]
    win = np.where(ok, win, _lowest(x.dtype)).transpose(order)
    flat_k = win.reshape(win.shape[:lead + nsp] + (prod(kmax),))
    arg = np.argmax(flat_k, axis=-1)
    if x.dtype.kind in "fV":
        nan = np.isnan(flat_k)
        if nan.any():  # torch keeps the last NaN of a window
            last = prod(kmax) - 1 - np.argmax(nan[..., ::-1], axis=-1)
            arg = np.where(nan.any(-1), last, arg)
    values = np.take_along_axis(flat_k, arg[..., None], -1)[..., 0]
    at: Any = np.unravel_index(arg, tuple(kmax))
    coords = []
    for i, (n, o) in enumerate(zip(sizes, output_size)):
        start, _ = adaptive_bounds(n, o)
        along = [1] * nsp
        along[i] = o
        coords.append(start.reshape(along) + at[i])
    return np.ascontiguousarray(values), flat_positions(coords, sizes)
