"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d."""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.autograd.grad_mode import no_grad
from retrograd.nn import init
from retrograd.nn.modules._elsewhere import elsewhere
from retrograd.nn.modules.module import Module
from retrograd.nn.modules.utils import _ntuple, _reverse_repeat_tuple
from retrograd.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _check_conv_args(in_channels: int, out_channels: int, groups: int, stride: tuple,
                     padding: Any, padding_mode: str) -> None:
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups != 0:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups != 0:
        raise ValueError("out_channels must be divisible by groups")
    if isinstance(padding, str):
        if padding not in _PADDING_STRINGS:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             f"{_PADDING_STRINGS}")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                         f"padding_mode='{padding_mode}'")


def _explicit_padding(padding: Any, kernel_size: tuple, dilation: tuple) -> Any:
    """F.pad's (last dim first, left/right) padding equal to the layer's padding."""
    if not isinstance(padding, str):
        return _reverse_repeat_tuple(padding, 2)
    pads = [0, 0] * len(kernel_size)
    if padding == "same":
        n = len(kernel_size)
        for i, (d, k) in enumerate(zip(dilation, kernel_size)):
            total = d * (k - 1)
            slot = 2 * (n - 1 - i)
            pads[slot], pads[slot + 1] = total // 2, total - total // 2
    return pads


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]
    _conv_fn_name = ""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple,
                 padding: Any, dilation: tuple, transposed: bool, output_padding: tuple,
                 groups: int, bias: bool, padding_mode: str, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_conv_args(in_channels, out_channels, groups, stride, padding, padding_mode)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _explicit_padding(padding, kernel_size, dilation)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(retrograd.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(retrograd.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # a=sqrt(5) makes the weight bound 1/sqrt(fan_in), the bias bound too
        with no_grad():
            init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        parts = [f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                 f"stride={self.stride}"]
        if self.padding != (0,) * len(self.padding):
            parts.append(f"padding={self.padding}")
        if self.dilation != (1,) * len(self.dilation):
            parts.append(f"dilation={self.dilation}")
        if self.output_padding != (0,) * len(self.output_padding):
            parts.append(f"output_padding={self.output_padding}")
        if self.groups != 1:
            parts.append(f"groups={self.groups}")
        if self.bias is None:
            parts.append("bias=False")
        if self.padding_mode != "zeros":
            parts.append(f"padding_mode={self.padding_mode}")
        return ", ".join(parts)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = getattr(nn.functional, self._conv_fn_name)
        if self.padding_mode != "zeros":
            padded = nn.functional.pad(input, self._reversed_padding_repeated_twice,
                                       mode=self.padding_mode)
            zeros = (0,) * len(self.kernel_size)
            return conv(padded, weight, bias, self.stride, zeros, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """A 1-D convolution (cross-correlation) over an input of several planes."""

    _conv_fn_name = "conv1d"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, *_conv_args(1, kernel_size, stride, padding,
                                                                dilation),
                         groups, bias, padding_mode, device=device, dtype=dtype)


class Conv2d(_ConvNd):
    """A 2-D convolution (cross-correlation) over an input of several planes."""

    _conv_fn_name = "conv2d"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, *_conv_args(2, kernel_size, stride, padding,
                                                                dilation),
                         groups, bias, padding_mode, device=device, dtype=dtype)


class Conv3d(_ConvNd):
    """A 3-D convolution (cross-correlation) over an input of several planes."""

    _conv_fn_name = "conv3d"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, *_conv_args(3, kernel_size, stride, padding,
                                                                dilation),
                         groups, bias, padding_mode, device=device, dtype=dtype)


def _conv_args(n: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any) -> tuple:
    """(kernel_size, stride, padding, dilation, transposed, output_padding) as n-tuples."""
    to_tuple = _ntuple(n)
    padding = padding if isinstance(padding, str) else to_tuple(padding)
    return (to_tuple(kernel_size), to_tuple(stride), padding, to_tuple(dilation), False,
            to_tuple(0))


class _ConvTransposeNd(_ConvNd):
    """Transposed convolution (the gradient of a convolution with respect to its input)."""

    _n = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        to_tuple = _ntuple(self._n)
        super().__init__(in_channels, out_channels, to_tuple(kernel_size), to_tuple(stride),
                         to_tuple(padding), to_tuple(dilation), True, to_tuple(output_padding),
                         groups, bias, padding_mode, device=device, dtype=dtype)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple:
        """The output_padding that makes the output `output_size` (or the layer's own)."""
        n = self._n
        if output_size is None:
            return self.output_padding
        non_spatial = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must "
                             f"have {n} or {non_spatial + n} elements (got {len(output_size)})")
        min_sizes = [(input.size(d + non_spatial) - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        max_sizes = [lo + s - 1 for lo, s in zip(min_sizes, self.stride)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{input.size()[2:]})")
        return tuple(size - lo for size, lo in zip(output_size, min_sizes))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        conv = getattr(nn.functional, f"conv_transpose{self._n}d")
        return conv(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                    self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    _n = 3

# torch's module path for these names, whose classes live in other files
_HOMES = {
    "LazyConv1d": "lazy_conv", "LazyConv2d": "lazy_conv", "LazyConv3d": "lazy_conv",
    "LazyConvTranspose1d": "lazy_conv", "LazyConvTranspose2d": "lazy_conv",
    "LazyConvTranspose3d": "lazy_conv"}
__getattr__ = elsewhere(__name__, _HOMES)
__all__ += [name for name in _HOMES if not name.startswith("_")]
