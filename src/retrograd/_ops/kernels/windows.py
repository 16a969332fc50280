"""NumPy kernels of Tensor.unfold's sliding windows (a strided view) and their backward.
retrograd._ops.windows declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd._dims import wrap_dim
from retrograd._ops.kernels.shape import _strided_view


def _window_count(n: int, size: int, step: int, dim: int) -> int:
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return (n - size) // step + 1


def _unfold_forward(a, dimension, size, step):
    if a.ndim == 0:  # a scalar is one window of size 0 or 1
        _window_count(1, size, step, 0)
        return _strided_view(a, (size,), (a.itemsize,))
    d = wrap_dim(dimension, a.ndim)
    count = _window_count(a.shape[d], size, step, d)
    shape = a.shape[:d] + (count,) + a.shape[d + 1:] + (size,)
    strides = a.strides[:d] + (a.strides[d] * step,) + a.strides[d + 1:] + (a.strides[d],)
    return _strided_view(a, shape, strides)


def _unfold_backward_forward(g, input_sizes, dim, size, step):
    out = np.zeros(tuple(input_sizes), g.dtype)
    if out.ndim == 0:
        out[...] = g.sum()
        return out
    d = wrap_dim(dim, out.ndim)
    count = g.shape[d]
    for j in range(size):  # offset j of every window: distinct positions j, j+step, ...
        key = (slice(None),) * d + (slice(j, j + step * (count - 1) + 1, step),)
        out[key] += g[..., j]
    return out
