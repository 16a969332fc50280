"""nn.grad (also F.grad): the gradients of a convolution with respect to its input and its
weight, given the gradient of its output, without building the forward (torch's helpers over
aten.convolution_backward)."""

from __future__ import annotations

from typing import Any

from retrograd._tensor import Tensor

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _backward(grad_output: Tensor, input: Tensor, weight: Tensor, n: int, stride: Any,
              padding: Any, dilation: Any, groups: int, which: int) -> Tensor:
    from retrograd.nn.modules.utils import _ntuple  # (nn.functional imports this module)
    from retrograd.ops import aten

    expand = _ntuple(n)  # (a one-element list is expanded by the op itself)
    mask = [which == 0, which == 1, False]
    return aten.convolution_backward(grad_output, input, weight, None, list(expand(stride)),
                                     list(expand(padding)), list(expand(dilation)), False,
                                     [0] * n, groups, mask)[which]


def _stand_in(grad_output: Tensor, size: Any) -> Tensor:
    """A tensor of the given size whose values are never read (only its shape is)."""
    return grad_output.new_empty(1).expand(tuple(size))


def _input_fn(n: int):
    def conv_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                   padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
        return _backward(grad_output, _stand_in(grad_output, input_size), weight, n, stride,
                         padding, dilation, groups, 0)
    conv_input.__name__ = conv_input.__qualname__ = f"conv{n}d_input"
    conv_input.__doc__ = (f"The gradient of conv{n}d with respect to its input, of size "
                          "input_size.")
    return conv_input


def _weight_fn(n: int):
    def conv_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                    padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
        return _backward(grad_output, input, _stand_in(grad_output, weight_size), n, stride,
                         padding, dilation, groups, 1)
    conv_weight.__name__ = conv_weight.__qualname__ = f"conv{n}d_weight"
    conv_weight.__doc__ = (f"The gradient of conv{n}d with respect to its weight, of size "
                           "weight_size.")
    return conv_weight


conv1d_input, conv1d_weight = _input_fn(1), _weight_fn(1)
conv2d_input, conv2d_weight = _input_fn(2), _weight_fn(2)
conv3d_input, conv3d_weight = _input_fn(3), _weight_fn(3)
