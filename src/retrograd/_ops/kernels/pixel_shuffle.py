"""NumPy kernels of pixel_shuffle and pixel_unshuffle with torch's checks.
retrograd._ops.pixel_shuffle declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np


def _shuffle_forward(a: np.ndarray, upscale_factor: int) -> np.ndarray:
    r = upscale_factor
    if a.ndim < 3:
        raise RuntimeError("pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {a.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = a.shape[-3:]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    lead = a.shape[:-3]
    n = len(lead)
    x = a.reshape(lead + (c // (r * r), r, r, h, w))
    # (..., c', r1, r2, h, w) -> (..., c', h, r1, w, r2)
    x = x.transpose(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return np.ascontiguousarray(x).reshape(lead + (c // (r * r), h * r, w * r))


def _unshuffle_forward(a: np.ndarray, downscale_factor: int) -> np.ndarray:
    r = downscale_factor
    if a.ndim < 3:
        raise RuntimeError("pixel_unshuffle expects input to have at least 3 dimensions, but got "
                           f"input with {a.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = a.shape[-3:]
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({dim})={size} is not "
                               f"divisible by {r}")
    lead = a.shape[:-3]
    n = len(lead)
    x = a.reshape(lead + (c, h // r, r, w // r, r))
    # (..., c, h', r1, w', r2) -> (..., c, r1, r2, h', w')
    x = x.transpose(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return np.ascontiguousarray(x).reshape(lead + (c * r * r, h // r, w // r))
