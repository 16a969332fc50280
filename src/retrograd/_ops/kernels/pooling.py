"""NumPy kernels of pooling: output sizes and torch's checks, max pooling's gather/scatter, average
pooling's window sums and divisors, adaptive average pooling's matrices. retrograd._ops.pooling
declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

from itertools import product as iproduct
from math import prod

import numpy as np

from retrograd._ops.kernels.conv import _offsets, _pad
from retrograd._ops.kernels.linalg import np_matmul
from retrograd._ops.layout import not_implemented


def pool_out_size(size: int, k: int, pad: int, stride: int, dilation: int, ceil: bool) -> int:
    """torch's pooling_output_shape (a last window starting in the right padding is dropped)."""
    span = dilation * (k - 1) + 1
    num = size + 2 * pad - span + (stride - 1 if ceil else 0)
    out = num // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _check_pool_pad(k, pad, stride, dilation):
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > int(((k - 1) * dilation + 1) / 2):  # C++ division truncates toward zero
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad="
                           f"{pad}, kernel_size={k} and dilation={dilation}")


def _check_pool2d(x, k, s, p, d, out_hw):
    """torch's pool2d_shape_check."""
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: "
                           f"{k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    valid = x.shape[-3] != 0 and x.shape[-2] != 0
    if not ((x.ndim == 3 and x.shape[0] != 0 and valid) or
            (x.ndim == 4 and valid and x.shape[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{list(x.shape)}")
    if k[1] // 2 < p[1] or k[0] // 2 < p[0]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    if out_hw[0] < 1 or out_hw[1] < 1:
        c, h, w = x.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out_hw[0]}x{out_hw[1]}). Output size is too small")


def _pool_geometry(x, k, s, p, d, ceil) -> tuple:
    out_hw = []
    for i in range(2):
        _check_pool_pad(k[i], p[i], s[i], d[i])
        out_hw.append(pool_out_size(x.shape[-2 + i], k[i], p[i], s[i], d[i], ceil))
    _check_pool2d(x, k, s, p, d, out_hw)
    # pad the high side far enough for ceil_mode's last, partial windows
    hi = [max(0, (o - 1) * si + di * (ki - 1) + 1 - n - pi)
          for o, si, di, ki, n, pi in zip(out_hw, s, d, k, x.shape[-2:], p)]
    return tuple(out_hw), ((p[0], hi[0]), (p[1], hi[1]))


def _lowest(dtype):
    return -np.inf if dtype.kind in "fV" else np.iinfo(dtype).min


def _max_pool_fwd(x, kernel_size, stride, padding, dilation, ceil_mode):
    k, s, p, d = kernel_size, stride or kernel_size, padding, dilation
    if x.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    out_hw, pad = _pool_geometry(x, k, s, p, d, ceil_mode)
    if x.dtype == np.bool_:
        raise not_implemented("max_pool2d", x.dtype)
    values, arg = _window_max(_pad(x, pad, _lowest(x.dtype)), k, s, d, out_hw)
    ki, kj = np.divmod(arg, k[1])
    rows = np.arange(out_hw[0])[:, None] * s[0] - p[0] + ki * d[0]
    cols = np.arange(out_hw[1]) * s[1] - p[1] + kj * d[1]
    h, w = x.shape[-2:]
    bad = (rows < 0) | (rows >= h) | (cols < 0) | (cols >= w)
    if bad.any():  # an all-lowest window whose first maximum is padding: torch's first valid
        rows, cols = _first_valid(rows, cols, bad, out_hw, s, p, d, x.shape[-2:])
    return values, (rows * w + cols).astype(np.int64)


def _window_max(xp, k, s, d, out_hw) -> tuple:
    """Max and its kernel offset over every window, as torch scans it (row-major, the first of
    equal maxima, the last NaN): one vectorized pass per kernel offset for each."""
    views = [xp[(Ellipsis,) + region] for _, region in _offsets(k, d, s, out_hw)]
    best = views[0].copy()
    for v in views[1:]:
        np.maximum(best, v, out=best)
    n = len(views)
    code = np.uint8 if n < 256 else np.uint32
    arg = np.zeros(best.shape, code)
    eq = np.empty(best.shape, bool)
    for i in range(n - 1, -1, -1):  # descending: the first equal offset is written last
        np.equal(views[i], best, out=eq)
        arg -= eq * (arg - code(i))  # arg = i where eq, branch-free
    if best.dtype.kind in "fV" and np.isnan(best).any():
        nan = np.isnan(best)
        for i, v in enumerate(views):
            arg[nan & np.isnan(v)] = i
    return best, arg.astype(np.int64)


def _first_valid(rows, cols, bad, out_hw, s, p, d, hw):
    rows, cols = np.broadcast_to(rows, bad.shape).copy(), np.broadcast_to(cols, bad.shape).copy()
    starts = []
    for i in range(2):
        st = np.arange(out_hw[i]) * s[i] - p[i]
        starts.append(np.where(st < 0, st + (-st + d[i] - 1) // d[i] * d[i], st))
    first_r = np.broadcast_to(starts[0][:, None], bad.shape)
    first_c = np.broadcast_to(starts[1], bad.shape)
    rows[bad], cols[bad] = first_r[bad], first_c[bad]
    return rows, cols


def _scatter_fwd(grad, indices, self_size, overlap=True):
    """Sum grad into a zero input-shaped array at the (per-plane) flat indices."""
    size = tuple(self_size)
    hw = size[-2] * size[-1]
    planes = prod(size[:-2])
    if not overlap:  # every input position is in one window at most: indices are distinct
        out = np.zeros((planes, hw), grad.dtype)
        idx = indices.reshape(planes, prod(indices.shape[-2:]))
        out[np.arange(planes)[:, None], idx] = grad.reshape(idx.shape)
        return out.reshape(size)
    offsets = (np.arange(planes, dtype=np.int64) * hw)[:, None]
    pos = (indices.reshape(planes, prod(indices.shape[-2:])) + offsets).ravel()
    total = np.bincount(pos, weights=grad.reshape(-1).astype(np.float64), minlength=planes * hw)
    return total.astype(grad.dtype).reshape(size)


def _gather_fwd(x, indices):
    planes = prod(x.shape[:-2])
    flat = x.reshape(planes, prod(x.shape[-2:]))
    idx = indices.reshape(planes, prod(indices.shape[-2:]))
    return np.take_along_axis(flat, idx, 1).reshape(indices.shape)


def _overlapping(kernel_size, stride, dilation) -> bool:
    stride = stride or kernel_size
    return any(st < (k - 1) * d + 1 for k, st, d in zip(kernel_size, stride, dilation))


def _avg_divisor(x_hw, out_hw, k, s, p, count_include_pad, divisor_override) -> np.ndarray:
    if divisor_override is not None:
        return divisor_override
    per_dim = []
    for n, o, ki, si, pi in zip(x_hw, out_hw, k, s, p):
        start = np.arange(o) * si - pi
        end = np.minimum(start + ki, n + pi)
        pool = end - start
        valid = np.minimum(end, n) - np.maximum(start, 0)
        per_dim.append(pool if count_include_pad else valid)
    return np.multiply.outer(per_dim[0], per_dim[1])


def _avg_pool_setup(x, k, s, p, ceil, divisor_override):
    s = s or k
    if x.ndim < 3:
        from retrograd import _errors as E

        raise IndexError(E.DIM_RANGE.format(-max(x.ndim, 1), max(x.ndim, 1) - 1, -3))
    out_hw, pad = _pool_geometry(x, k, s, p, (1, 1), ceil)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if x.dtype.kind not in "fV" and x.dtype != np.int64:
        raise not_implemented("avg_pool2d", x.dtype)
    return s, out_hw, pad


def _window_sum(xp, k, s, out_hw):
    acc = None
    for i, j in iproduct(range(k[0]), range(k[1])):
        part = xp[..., i:i + s[0] * (out_hw[0] - 1) + 1:s[0], j:j + s[1] * (out_hw[1] - 1) + 1:s[1]]
        acc = part.copy() if acc is None else np.add(acc, part, out=acc)
    return acc


def _avg_pool_fwd(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                  divisor_override):
    k, p = kernel_size, padding
    s, out_hw, pad = _avg_pool_setup(x, k, stride, p, ceil_mode, divisor_override)
    total = _window_sum(_pad(x, pad), k, s, out_hw)
    div = _avg_divisor(x.shape[-2:], out_hw, k, s, p, count_include_pad, divisor_override)
    if total.dtype.kind == "i":  # C++ integer division truncates toward zero
        return np.trunc(total / div).astype(total.dtype)
    return np.divide(total, np.asarray(div, dtype=total.dtype), out=total)


def _avg_pool_bwd(grad, self_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                  divisor_override):
    k, p = kernel_size, padding
    s = stride or k
    hw = tuple(self_size[-2:])
    out_hw = grad.shape[-2:]
    div = _avg_divisor(hw, out_hw, k, s, p, count_include_pad, divisor_override)
    g = grad / np.asarray(div, dtype=grad.dtype)
    hi = [max(0, (o - 1) * si + ki - n - pi) for o, si, ki, n, pi in zip(out_hw, s, k, hw, p)]
    acc = np.zeros(grad.shape[:-2] + (hw[0] + p[0] + hi[0], hw[1] + p[1] + hi[1]), grad.dtype)
    for i, j in iproduct(range(k[0]), range(k[1])):
        acc[..., i:i + s[0] * (out_hw[0] - 1) + 1:s[0],
            j:j + s[1] * (out_hw[1] - 1) + 1:s[1]] += g
    return acc[..., p[0]:p[0] + hw[0], p[1]:p[1] + hw[1]]


def _adaptive_matrix(n: int, out: int, dtype) -> np.ndarray:
    """(out, n): row i averages input [floor(i*n/out), ceil((i+1)*n/out))."""
    i = np.arange(out)
    start = (i * n) // out
    end = -((-(i + 1) * n) // out)
    cols = np.arange(n)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _adaptive_fwd(x, output_size):
    ph = _adaptive_matrix(x.shape[-2], output_size[0], x.dtype)
    pw = _adaptive_matrix(x.shape[-1], output_size[1], x.dtype)
    return np_matmul(np_matmul(ph, x), pw.T)


def _adaptive_bwd(grad, self_size):
    ph = _adaptive_matrix(self_size[-2], grad.shape[-2], grad.dtype)
    pw = _adaptive_matrix(self_size[-1], grad.shape[-1], grad.dtype)
    return np_matmul(np_matmul(ph.T, grad), pw)


def _pair(value, name: str, what: str, allow_empty: bool = False) -> list:
    if value is None or (allow_empty and isinstance(value, (list, tuple)) and not value):
        return []
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return [int(value[0])] * 2
        if len(value) != 2:
            raise RuntimeError(f"{name}: {what}")
        return [int(v) for v in value]
    return [int(value)] * 2


def _pool2d_args(name, kernel_size, stride, padding, dilation=1) -> tuple:
    k = _pair(kernel_size, name, "kernel_size must either be a single int, or a tuple of two ints")
    s = _pair(stride, name, "stride must either be omitted, a single int, or a tuple of two ints",
              allow_empty=True)
    p = _pair(padding, name, "padding must either be a single int, or a tuple of two ints")
    d = _pair(dilation, name, "dilation must be either a single int, or a tuple of two ints")
    return k, s or k, p, d


def _one(value, message: str, allow_empty: bool = False) -> list:
    if value is None or (allow_empty and isinstance(value, (list, tuple)) and not value):
        return []
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise RuntimeError(message.format(len(value)))
        return [int(value[0])]
    return [int(value)]
