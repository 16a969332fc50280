"""Convolution (1-3d, transposed too), with NumPy kernels.

A convolution is one batched matmul over an im2col view built with sliding_window_view; its
input gradient (the transposed convolution) is a matmul then a scatter-add over kernel
offsets, its weight gradient one matmul per group. The three kernels are each other's adjoints,
so each is declared as an op whose gradients are the other two: any order of derivative works.
Pooling (pooling.py) follows the same pattern.

The NumPy kernels the declarations run are in kernels/conv.py.
"""

from __future__ import annotations

from collections.abc import Callable

from retrograd import _warning_site as _ws
from retrograd._ops import dispatch
from retrograd._ops.kernels.conv import (
    _bias_grad_array,
    _check_conv,
    _conv_fwd,
    _conv_tr_fwd,
    _conv_w_fwd,
    _conv_weight_grad_array,
    _convolution_fwd,
    _flat,
    _public_params,
    _public_weight_grad_array,
    _tuple,
    expand_params,
)
from retrograd._ops.linalg import squeeze_dim
from retrograd._ops.overloads import BIND_EACH, composite, overloaded
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor

# --- ops: forward kernels and their adjoints --------------------------------------------------


def _spatial(shape) -> list:
    return list(shape[2:])


_conv_corr = op(
    "_conv_corr(Tensor input, Tensor weight, int[] stride, int[] padding, int[] dilation, "
    "int groups, int[] out_size) -> Tensor", _conv_fwd, node="ConvolutionBackward0",
    grads={"input": lambda grad, weight, input_shape, stride, padding, dilation, groups:
           _conv_corr_t(grad, weight, stride, padding, dilation, groups, _spatial(input_shape)),
           "weight": lambda grad, input, weight_shape, stride, padding, dilation, groups:
           _conv_corr_w(input, grad, stride, padding, dilation, groups, list(weight_shape))},
    function=False, method=False)

_conv_corr_t = op(
    "_conv_corr_t(Tensor grad_output, Tensor weight, int[] stride, int[] padding, "
    "int[] dilation, int groups, int[] in_size) -> Tensor", _conv_tr_fwd,
    node="ConvolutionBackwardBackward0",
    grads={"grad_output": lambda grad, weight, grad_output_shape, stride, padding, dilation,
           groups: _conv_corr(grad, weight, stride, padding, dilation, groups,
                              _spatial(grad_output_shape)),
           "weight": lambda grad, grad_output, weight_shape, stride, padding, dilation, groups:
           _conv_corr_w(grad, grad_output, stride, padding, dilation, groups,
                        list(weight_shape))},
    function=False, method=False)

_conv_corr_w = op(
    "_conv_corr_w(Tensor input, Tensor grad_output, int[] stride, int[] padding, "
    "int[] dilation, int groups, int[] weight_size) -> Tensor", _conv_w_fwd,
    node="ConvolutionBackwardBackward0",
    grads={"input": lambda grad, grad_output, input_shape, stride, padding, dilation, groups:
           _conv_corr_t(grad_output, grad, stride, padding, dilation, groups,
                        _spatial(input_shape)),
           "grad_output": lambda grad, input, grad_output_shape, stride, padding, dilation,
           groups: _conv_corr(input, grad, stride, padding, dilation, groups,
                              _spatial(grad_output_shape))},
    function=False, method=False)


def _bias_grad(grad: Tensor) -> Tensor:
    return grad.sum([0] + list(range(2, grad.dim())))


def _conv_input_grad(grad, weight, input_shape, stride, padding, dilation, transposed, groups):
    if transposed:
        return _conv_corr(grad, weight, stride, padding, dilation, groups, _spatial(input_shape))
    return _conv_corr_t(grad, weight, stride, padding, dilation, groups, _spatial(input_shape))


def _conv_weight_grad(grad, input, weight_shape, stride, padding, dilation, transposed, groups):
    if transposed:
        return _conv_corr_w(grad, input, stride, padding, dilation, groups, list(weight_shape))
    return _conv_corr_w(input, grad, stride, padding, dilation, groups, list(weight_shape))


def _conv_input_grad_array(grad, weight, input_shape, stride, padding, dilation, transposed,
                           groups):
    """_conv_input_grad on arrays: the adjoint kernel itself (NOTE [Array formulas])."""
    if transposed:
        return _conv_fwd(grad, weight, stride, padding, dilation, groups, _spatial(input_shape))
    return _conv_tr_fwd(grad, weight, stride, padding, dilation, groups, _spatial(input_shape))


# The input and weight formulas read bias_shape only so that the node keeps it, as torch's
# does (grad_fn._saved_bias_sym_sizes_opt); they do not need it.
_CONV_GRADS = {
    "input": lambda grad, weight, input_shape, stride, padding, dilation, transposed, groups,
    bias_shape:
    _conv_input_grad(grad, weight, input_shape, stride, padding, dilation, transposed, groups),
    "weight": lambda grad, input, weight_shape, stride, padding, dilation, transposed, groups,
    bias_shape:
    _conv_weight_grad(grad, input, weight_shape, stride, padding, dilation, transposed, groups),
    "bias": lambda grad: _bias_grad(grad),
}

_CONV_ARRAY_GRADS = {
    "input": _conv_input_grad_array, "weight": _conv_weight_grad_array,
    "bias": lambda grad: _bias_grad_array(grad),
}

# torch's convolution with (lo, hi) padding pairs: 'same' padding can be asymmetric
_convolution = op(
    "_convolution_pairs(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
    "int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor",
    _convolution_fwd, node="ConvolutionBackward0", grads=_CONV_GRADS,
    array_grads=_CONV_ARRAY_GRADS, function=False, method=False)


def _convolution_public_fwd(x, w, bias, stride, padding, dilation, transposed, output_padding,
                            groups):
    stride, padding, dilation, output_padding = expand_params(w, stride, padding, dilation,
                                                              transposed, output_padding)
    _check_conv(x, w, bias, stride, padding, dilation, transposed, output_padding, groups)
    flat = _flat((p, p) for p in padding)
    return _convolution_fwd(x, w, bias, stride, flat, dilation, transposed, output_padding, groups)


def _public_input_grad(grad, weight, input_shape, stride, padding, dilation, transposed, groups,
                       bias_shape):
    # bias_shape: kept for grad_fn._saved_bias_sym_sizes_opt, as in _CONV_GRADS
    s, p, d = _public_params(len(input_shape) - 2, stride, padding, dilation)
    return _conv_input_grad(grad, weight, input_shape, s, p, d, transposed, groups)


def _public_weight_grad(grad, input, weight_shape, stride, padding, dilation, transposed, groups,
                        bias_shape):
    s, p, d = _public_params(len(weight_shape) - 2, stride, padding, dilation)
    return _conv_weight_grad(grad, input, weight_shape, s, p, d, transposed, groups)


def _public_input_grad_array(grad, weight, input_shape, stride, padding, dilation, transposed,
                             groups):
    s, p, d = _public_params(len(input_shape) - 2, stride, padding, dilation)
    return _conv_input_grad_array(grad, weight, input_shape, s, p, d, transposed, groups)


convolution = op(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    _convolution_public_fwd, method=False,
    grads={"input": _public_input_grad, "weight": _public_weight_grad, "bias": _bias_grad},
    array_grads={"input": _public_input_grad_array, "weight": _public_weight_grad_array,
                 "bias": lambda grad: _bias_grad_array(grad)})



def _convolution_backward(grad_output: Tensor, input: Tensor, weight: Tensor, bias_sizes,
                          stride, padding, dilation, transposed: bool, output_padding, groups: int,
                          output_mask) -> tuple:
    """convolution's three gradients as one call (aten.convolution_backward): made of the ops
    convolution's own formulas use, so they differentiate and carry tangents; None where
    output_mask leaves a gradient out."""
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_input = _public_input_grad(grad_output, weight, tuple(input.shape), stride, padding,
                                        dilation, transposed, groups, bias_sizes)
    if output_mask[1]:
        grad_weight = _public_weight_grad(grad_output, input, tuple(weight.shape), stride,
                                          padding, dilation, transposed, groups, bias_sizes)
    if output_mask[2]:
        grad_bias = _bias_grad(grad_output)
    return grad_input, grad_weight, grad_bias


composite("convolution_backward(Tensor grad_output, Tensor input, Tensor weight, "
          "SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
          "bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> "
          "(Tensor, Tensor, Tensor)", _convolution_backward, function=False, method=False)

# --- checks, as torch's convolution words them --------------------------------------------------


# --- the functional API ----------------------------------------------------------------------


def _same_padding(weight: Tensor, dilation: list) -> tuple:
    """torch's 'same': total d*(k-1) per dim, the odd element on the high side."""
    totals = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
    return tuple((t // 2, t - t // 2) for t in totals)


def _conv(name: str, nd: int, input: Tensor, weight: Tensor, bias, stride, padding, dilation,
          groups) -> Tensor:
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input, weight, bias = dispatch.autocast.cast("lower", input, weight, bias)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    stride_l, dil_l = _tuple(stride, nd), _tuple(dilation, nd)
    if isinstance(padding, str):
        out = _conv_str_padding(x, weight, bias, stride_l, padding, dil_l, groups)
    else:
        out = convolution(x, weight, bias, stride_l, _tuple(padding, nd), dil_l, False,
                          [0] * len(stride_l), groups)
    return squeeze_dim(out, 0) if unbatched else out


def _conv_str_padding(x, weight, bias, stride, padding, dilation, groups) -> Tensor:
    nd = weight.dim() - 2
    if padding == "valid":
        return convolution(x, weight, bias, stride, [0] * nd, dilation, False, [0] * nd, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pairs = _same_padding(weight, dilation)
    if all(lo == hi for lo, hi in pairs):
        return convolution(x, weight, bias, stride, [lo for lo, _ in pairs], dilation, False,
                           [0] * nd, groups)
    # the caller of conv2d, past the dispatcher and the overload's function
    _ws.warn("Using padding='same' with even kernel lengths and odd dilation may require a "
             "zero-padded copy of the input be created", UserWarning, stacklevel=5)
    sym = [lo for lo, _ in pairs]
    _check_conv(x._data, weight._data, None if bias is None else bias._data, stride, sym,
                dilation, False, [0] * nd, groups)
    return _convolution(x, weight, bias, stride, _flat(pairs), dilation, False, [0] * nd, groups)


def _conv_form(name: str, nd: int) -> Callable:
    """A function of its own for each overload (each carries its declaration)."""
    def conv_form(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, dilation=1,
                  groups: int = 1) -> Tensor:
        return _conv(name, nd, input, weight, bias, stride, padding, dilation, groups)

    return conv_form


# torch's conv1d/2d/3d (composites of convolution): padding is an int list or, in the .padding
# overload, a string ('same' or 'valid'); torch's parser checks every argument's type
for _nd in (1, 2, 3):
    _name = f"conv{_nd}d"
    _rest = f"Tensor input, Tensor weight, Tensor? bias=None, SymInt[{_nd}] stride=1"
    composite(f"{_name}({_rest}, SymInt[{_nd}] padding=0, SymInt[{_nd}] dilation=1, "
              "SymInt groups=1) -> Tensor", _conv_form(_name, _nd), method=False)
    composite(f'{_name}.padding({_rest}, str padding="valid", SymInt[{_nd}] dilation=1, '
              "SymInt groups=1) -> Tensor", _conv_form(_name, _nd), method=False)
    BIND_EACH.add(_name)
conv1d = overloaded("conv1d")
conv2d = overloaded("conv2d")
conv3d = overloaded("conv3d")


def _conv_t(name: str, nd: int, input: Tensor, weight: Tensor, bias, stride, padding,
            output_padding, groups, dilation) -> Tensor:
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input, weight, bias = dispatch.autocast.cast("lower", input, weight, bias)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    out = convolution(x, weight, bias, _tuple(stride, nd), _tuple(padding, nd),
                      _tuple(dilation, nd), True, _tuple(output_padding, nd), groups)
    return squeeze_dim(out, 0) if unbatched else out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    return _conv_t("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    return _conv_t("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    return _conv_t("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


for _fn in (conv1d, conv2d, conv3d):
    register_functional(_fn.__name__, _fn)
for _fn in (conv_transpose1d, conv_transpose2d, conv_transpose3d):
    register_functional(_fn.__name__, _fn)
    register(_fn.__name__, _fn)
