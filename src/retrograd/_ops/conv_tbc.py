"""conv_tbc: a 1-d convolution over (time, batch, channels) input with a (kernel width,
in channels, out channels) weight, as fairseq's models use it (node ConvTbcBackward0).

The input is padded (or, for a negative pad, cropped) by `pad` steps at both ends of time; each
output step is the sum over the kernel's window of window rows times the weight. The gradients
are written with conv_tbc itself (the input's is the convolution of the output gradient with the
weight flipped in time), so they differentiate again.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.layout import label_entry_points
from retrograd._ops.registry import op, register_functional


def _padded(a: np.ndarray, pad: int) -> np.ndarray:
    if pad > 0:
        return np.pad(a, ((pad, pad), (0, 0), (0, 0)))
    return a[-pad:a.shape[0] + pad] if pad < 0 else a


def _forward(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    if x.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if w.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if b.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if x.shape[2] != w.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if b.shape[0] != w.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    xp = _padded(x, pad)
    width, steps, batch, out_channels = w.shape[0], xp.shape[0], x.shape[1], w.shape[2]
    out_steps = steps - width + 1
    if out_steps < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_steps}: "
                           f"[{out_steps}, {batch}, {out_channels}]")
    if out_steps == 0:
        return np.zeros((0, batch, out_channels), dtype=np.result_type(x, w))
    windows = np.lib.stride_tricks.sliding_window_view(xp, width, axis=0)  # (T', B, C, K)
    out = np.tensordot(windows, w, axes=([3, 2], [0, 1]))  # (T', B, O)
    return out + b


def _input_grad(grad, weight, pad):
    import retrograd

    width, in_channels = weight.shape[0], weight.shape[1]
    flipped = weight.flip(0).transpose(1, 2)  # (K, O, C)
    full = conv_tbc(grad, flipped, grad.new_zeros(in_channels), width - 1)  # the padded input's
    return retrograd.constant_pad_nd(full, (0, 0, 0, 0, -pad, -pad)) if pad else full


def _weight_grad(grad, self, weight, pad):
    import retrograd

    xp = retrograd.constant_pad_nd(self, (0, 0, 0, 0, pad, pad)) if pad else self
    windows = xp.unfold(0, weight.shape[0], 1)  # (T', B, C, K)
    return retrograd.einsum("tbck,tbo->kco", windows, grad)


conv_tbc = op(
    "conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor", _forward,
    grads={"self": _input_grad, "weight": _weight_grad,
           "bias": lambda grad: grad.sum((0, 1))},
    method=False)

register_functional("conv_tbc", conv_tbc)
label_entry_points([conv_tbc])
