"""NumPy kernels of im2col and col2im (nn.functional.unfold / fold) with torch's checks.
retrograd._ops.im2col declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np


def _check_params(kernel, dilation, padding, stride) -> None:
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    if kh <= 0 or kw <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got kernel_height: "
                           f"{kh} kernel_width: {kw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilation_height: "
                           f"{dh} dilation_width: {dw}")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {ph} "
                           f"pad_width: {pw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError("stride should be greater than zero, but got stride_height: "
                           f"{sh} stride_width: {sw}")


def _blocks(size, kernel, dilation, padding, stride) -> tuple[int, int]:
    """Number of block positions along H and W."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))


def _im2col_forward(a, kernel_size, dilation, padding, stride):
    _check_params(kernel_size, dilation, padding, stride)
    if a.ndim not in (3, 4) or 0 in a.shape[1:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           "and other non-zero dimensions for input, but got: "
                           f"{list(a.shape)}")
    batched = a.ndim == 4
    if not batched:
        a = a[None]
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    oh, ow = _blocks(a.shape[2:], kernel_size, dilation, padding, stride)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size {tuple(a.shape[2:])}, kernel_size="
                           f"{tuple(kernel_size)}, dilation={tuple(dilation)}, padding="
                           f"{tuple(padding)}, calculated shape of the array of sliding blocks "
                           f"as ({oh}, {ow}), but its components must be at least one.")
    padded = np.pad(a, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c = padded.shape[:2]
    s = padded.strides
    blocks = np.lib.stride_tricks.as_strided(
        padded, (n, c, kh, kw, oh, ow), (s[0], s[1], s[2] * dh, s[3] * dw, s[2] * sh, s[3] * sw))
    out = blocks.reshape(n, c * kh * kw, oh * ow)
    return out if batched else out[0]


def _col2im_forward(a, output_size, kernel_size, dilation, padding, stride):
    _check_params(kernel_size, dilation, padding, stride)
    if a.ndim not in (2, 3) or 0 in a.shape[1:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(a.shape)}")
    batched = a.ndim == 3
    if not batched:
        a = a[None]
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    if a.shape[1] % (kh * kw):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={a.shape[1]} and kernel_size="
                           f"{tuple(kernel_size)}.")
    oh, ow = _blocks(output_size, kernel_size, dilation, padding, stride)
    if a.shape[2] != oh * ow:
        raise RuntimeError(f"Given output_size={tuple(output_size)}, kernel_size="
                           f"{tuple(kernel_size)}, dilation={tuple(dilation)}, padding="
                           f"{tuple(padding)}, stride={tuple(stride)}, expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks {oh} * "
                           f"{ow} = {oh * ow}, but got input.size(2)={a.shape[2]}.")
    n, c = a.shape[0], a.shape[1] // (kh * kw)
    h, w = output_size
    out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), a.dtype)
    cols = a.reshape(n, c, kh, kw, oh, ow)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                j * dw:j * dw + sw * (ow - 1) + 1:sw] += cols[:, :, i, j]
    out = out[:, :, ph:ph + h, pw:pw + w]
    return np.ascontiguousarray(out if batched else out[0])


def _pair(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x, x)
