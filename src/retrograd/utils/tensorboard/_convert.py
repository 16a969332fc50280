"""Values to NumPy, and image layouts to height x width x channels, as torch's writer takes them."""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd._dtype import bfloat16, float16
from retrograd._tensor import Tensor


def make_np(x: Any) -> np.ndarray:
    """An array of `x`: arrays pass through, Python/NumPy scalars become one-element arrays."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.dtype == bfloat16:
            x = x.to(float16)  # as torch: NumPy has no bfloat16 of its own
        return np.asarray(x.detach().numpy())
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """N x C x H x W (C 1 or 3) to one 3 x H' x W' canvas, eight images a row, zeros beyond."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, _, height, width = images.shape
    ncols = min(count, ncols)
    nrows = -(-count // ncols)
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(count):
        row, col = divmod(i, ncols)
        canvas[:, row * height:(row + 1) * height, col * width:(col + 1) * width] = images[i]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:  # noqa: N802
    """Reorder an image (or a batch, tiled into a grid) to height x width x channels."""
    # torch's messages, line-continuation whitespace included
    if len(set(input_format)) != len(input_format):
        raise AssertionError("You can not use the same dimension shorthand twice."
                             f"             input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError("size of input tensor and input format are different."
                             f"         tensor shape: {tensor.shape}, input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        nchw = tensor.transpose([input_format.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc, hwc, hwc], 2)
        return hwc
    if len(input_format) == 2:
        hw = tensor.transpose([input_format.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    # torch returns None here, and fails later on its shape
    raise AssertionError(f"size of input format should be 2, 3 or 4, got {input_format}")
