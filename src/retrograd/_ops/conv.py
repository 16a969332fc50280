"""Convolution (1-3d, transposed too) and pooling, with NumPy kernels.

A convolution is one batched matmul over an im2col view built with sliding_window_view; its
input gradient (the transposed convolution) is a matmul then a scatter-add over kernel
offsets, its weight gradient one matmul per group. The three kernels are each other's adjoints,
so each is declared as an op whose gradients are the other two: any order of derivative works.
Pooling follows the same pattern: max pooling gathers by indices and scatters back, average
pooling is its own adjoint up to the divisor, adaptive average pooling is two small matmuls.
"""

from __future__ import annotations

import warnings
from itertools import product as iproduct
from math import prod

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from retrograd._ops import dispatch
from retrograd._ops.linalg import not_implemented, np_matmul, squeeze_dim
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor

# --- NumPy kernels ---------------------------------------------------------------------------
# Shapes: x (N, C, *S), w (Cout, C/groups, *K), y (N, Cout, *O); `pad` holds (lo, hi) per dim.


def _pad(x: np.ndarray, pad: tuple, value=0) -> np.ndarray:
    if not any(lo or hi for lo, hi in pad):
        return x
    width = [(0, 0)] * (x.ndim - len(pad)) + [(lo, hi) for lo, hi in pad]
    return np.pad(x, width, constant_values=value)


def _windows(xp: np.ndarray, ksize: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """A view (..., *O, *K) of every kernel window of the last len(ksize) dims of xp."""
    nd = len(ksize)
    span = tuple((k - 1) * d + 1 for k, d in zip(ksize, dilation))
    win = sliding_window_view(xp, span, axis=tuple(range(xp.ndim - nd, xp.ndim)))
    lead = (slice(None),) * (xp.ndim - nd)
    return win[lead + tuple(slice(None, None, s) for s in stride)
               + tuple(slice(None, None, d) for d in dilation)]


def _group_windows(x, ksize, stride, pad, dilation, groups, out_sp=None) -> np.ndarray:
    """The windows view of padded x as (N, G, C/G, *O, *K); out_sp keeps only the first O."""
    n, c = x.shape[:2]
    win = _windows(_pad(x, pad), ksize, stride, dilation)  # (N, C, *O, *K)
    if out_sp is not None:  # an adjoint of a transposed convolution with output_padding
        win = win[(slice(None), slice(None)) + tuple(slice(o) for o in out_sp)]
    return win.reshape((n, groups, c // groups) + win.shape[2:])


def _cols(x: np.ndarray, ksize, stride, pad, dilation, groups, out_sp=None) -> tuple:
    """im2col: (N, G, C/G * prod(K), prod(O)) and the output spatial shape O."""
    nd = len(ksize)
    win = _group_windows(x, ksize, stride, pad, dilation, groups, out_sp)
    out_sp = win.shape[3:3 + nd]
    order = (0, 1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + tuple(range(3, 3 + nd))
    cols = win.transpose(order).reshape(x.shape[0], groups, win.shape[2] * prod(ksize),
                                        prod(out_sp))
    return cols, out_sp


def _offsets(ksize, dilation, stride, out_sp):
    """For each kernel offset: its index and the strided region of the padded input it reads."""
    for kk in iproduct(*(range(k) for k in ksize)):
        yield kk, tuple(slice(i * d, i * d + s * (o - 1) + 1, s)
                        for i, d, s, o in zip(kk, dilation, stride, out_sp))


def _depthwise(w: np.ndarray, groups: int) -> bool:
    # one input channel per group: per-offset products beat many tiny matmuls
    return groups > 1 and w.shape[1] == 1


def conv_nd(x, w, stride, pad, dilation, groups, out_sp=None) -> np.ndarray:
    """Cross-correlation, as torch's convolution computes it (out_sp: keep the first O)."""
    n = x.shape[0]
    cout = w.shape[0]
    if _depthwise(w, groups):
        return _conv_depthwise(x, w, stride, pad, dilation, groups, out_sp)
    cols, out_sp = _cols(x, w.shape[2:], stride, pad, dilation, groups, out_sp)
    wm = w.reshape(groups, cout // groups, cols.shape[2])
    return np_matmul(wm, cols).reshape((n, cout) + tuple(out_sp))


def _conv_depthwise(x, w, stride, pad, dilation, groups, out_sp=None) -> np.ndarray:
    n, nd = x.shape[0], w.ndim - 2
    og = w.shape[0] // groups
    xp = _pad(x, pad)
    if out_sp is None:
        out_sp = tuple((size - d * (k - 1) - 1) // st + 1 for size, k, d, st
                       in zip(xp.shape[2:], w.shape[2:], dilation, stride))
    out = np.zeros((n, groups, og) + tuple(out_sp), x.dtype)
    wg = w.reshape((groups, og) + w.shape[2:])
    for kk, region in _offsets(w.shape[2:], dilation, stride, out_sp):
        xs = xp[(slice(None), slice(None)) + region][:, :, None]
        out += wg[(slice(None), slice(None)) + kk].reshape((1, groups, og) + (1,) * nd) * xs
    return out.reshape((n, groups * og) + tuple(out_sp))


def _conv2d_transpose_rows(y, w, pad, in_sp) -> np.ndarray | None:
    """conv_nd_transpose for 2-d, stride 1, no dilation, one group, on the padded input's row
    pitch: y is laid on a (Hp, Wp) grid, so the window at kernel offset (i, j) is one shift by
    i * Wp + j of the whole flattened grid, and the scatter is kh * kw contiguous adds (NumPy's
    adds over 8-wide strided slices were 6x slower). None where y does not fit the grid."""
    n, cout, oh, ow = y.shape
    cin, kh, kw = w.shape[1:]
    (plh, phh), (plw, phw) = pad
    hp, wp = in_sp[0] + plh + phh, in_sp[1] + plw + phw
    if oh + kh - 1 > hp or ow + kw - 1 > wp:
        return None
    grid = np.zeros((cout, n, hp, wp), y.dtype)
    grid[:, :, :oh, :ow] = y.transpose(1, 0, 2, 3)
    size = n * hp * wp
    cols = np_matmul(w.reshape(cout, cin * kh * kw).T, grid.reshape(cout, size))
    cols = cols.reshape(cin, kh * kw, size)
    acc = np.zeros((cin, size + (kh - 1) * wp + kw - 1), y.dtype)
    for i in range(kh):
        for j in range(kw):
            acc[:, i * wp + j:i * wp + j + size] += cols[:, i * kw + j]
    crop = acc[:, :size].reshape(cin, n, hp, wp)[:, :, plh:plh + in_sp[0], plw:plw + in_sp[1]]
    return np.ascontiguousarray(crop.transpose(1, 0, 2, 3))


def conv_nd_transpose(y, w, stride, pad, dilation, groups, in_sp) -> np.ndarray:
    """The adjoint of conv_nd in x: scatter w-weighted y back over every window position."""
    if (y.ndim == 4 and groups == 1 and tuple(stride) == (1, 1)
            and tuple(dilation) == (1, 1)):
        out = _conv2d_transpose_rows(y, w, pad, tuple(in_sp))
        if out is not None:
            return out
    n, cout = y.shape[:2]
    ksize = w.shape[2:]
    nd = len(ksize)
    cg = w.shape[1]
    og = cout // groups
    out_sp = y.shape[2:]
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(in_sp, pad))
    acc = np.zeros((n, groups * cg) + padded, y.dtype)
    lead = (slice(None), slice(None))
    if _depthwise(w, groups):
        yg = y.reshape((n, groups, og) + tuple(out_sp))
        wg = w.reshape((groups, og) + tuple(ksize))
        for kk, region in _offsets(ksize, dilation, stride, out_sp):
            part = wg[lead + kk].reshape((1, groups, og) + (1,) * nd) * yg
            acc[lead + region] += part[:, :, 0] if og == 1 else part.sum(2)
    else:
        wm = w.reshape(groups, og, cg * prod(ksize)).transpose(0, 2, 1)  # (G, Cg*K, Og)
        cols = np_matmul(wm, y.reshape(n, groups, og, prod(out_sp)))  # (N, G, Cg*K, O)
        cols = cols.reshape((n, groups * cg) + tuple(ksize) + tuple(out_sp))
        for kk, region in _offsets(ksize, dilation, stride, out_sp):
            acc[lead + region] += cols[lead + kk]
    if not any(p != (0, 0) for p in pad):
        return acc
    crop = tuple(slice(lo, lo + s) for s, (lo, _) in zip(in_sp, pad))
    return np.ascontiguousarray(acc[lead + crop])


def conv_nd_weight(x, y, stride, pad, dilation, groups, ksize) -> np.ndarray:
    """The adjoint of conv_nd in w: correlate every window of x with the output gradient y."""
    n, cout = y.shape[:2]
    nd = len(ksize)
    og, cg = cout // groups, x.shape[1] // groups
    npos = prod(y.shape[2:])
    if groups > 1 and cg == 1:
        return _conv_weight_depthwise(x, y, stride, pad, dilation, groups, ksize)
    win = _group_windows(x, ksize, stride, pad, dilation, groups, y.shape[2:])
    # one matmul per group, contracting batch and positions together
    order = (1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + (0,) + tuple(range(3, 3 + nd))
    cols = win.transpose(order).reshape(groups, cg * prod(ksize), n * npos)
    ym = y.reshape(n, groups, og, npos).transpose(1, 2, 0, 3).reshape(groups, og, n * npos)
    gw = np_matmul(ym, cols.transpose(0, 2, 1))
    return gw.reshape((cout, cg) + tuple(ksize))


def _conv_weight_depthwise(x, y, stride, pad, dilation, groups, ksize) -> np.ndarray:
    n, cout = y.shape[:2]
    og = cout // groups
    xp = _pad(x, pad)
    yg = y.reshape((n, groups, og, prod(y.shape[2:])))
    gw = np.empty((groups, og) + tuple(ksize), y.dtype)
    for kk, region in _offsets(ksize, dilation, stride, y.shape[2:]):
        xs = xp[(slice(None), slice(None)) + region].reshape(yg.shape[:2] + yg.shape[3:])
        gw[(slice(None), slice(None)) + kk] = np.einsum("ngop,ngp->go", yg, xs)
    return gw.reshape((cout, 1) + tuple(ksize))


# --- ops: forward kernels and their adjoints --------------------------------------------------


def _pairs(padding) -> tuple:
    """(lo, hi) pairs from a flat [lo0, hi0, lo1, hi1, ...] list."""
    return tuple((padding[2 * i], padding[2 * i + 1]) for i in range(len(padding) // 2))


def _flat(pairs) -> list:
    return [v for p in pairs for v in p]


def _transposed_size(in_sp, ksize, stride, pad, dilation, out_pad) -> tuple:
    return tuple((i - 1) * s - lo - hi + d * (k - 1) + op + 1 for i, k, s, (lo, hi), d, op
                 in zip(in_sp, ksize, stride, pad, dilation, out_pad))


def _add_bias(out: np.ndarray, bias) -> np.ndarray:
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


def _conv_fwd(x, w, stride, padding, dilation, groups, out_size):
    return conv_nd(x, w, tuple(stride), _pairs(padding), tuple(dilation), groups,
                   tuple(out_size) or None)


def _conv_tr_fwd(y, w, stride, padding, dilation, groups, in_size):
    return conv_nd_transpose(y, w, tuple(stride), _pairs(padding), tuple(dilation), groups,
                             tuple(in_size))


def _conv_w_fwd(x, y, stride, padding, dilation, groups, weight_size):
    return conv_nd_weight(x, y, tuple(stride), _pairs(padding), tuple(dilation), groups,
                          tuple(weight_size[2:]))


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


def _convolution_fwd(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    """`padding` here is (lo, hi) pairs flattened; the public op converts torch's form."""
    pad = _pairs(padding)
    if transposed:
        size = _transposed_size(x.shape[2:], w.shape[2:], stride, pad, dilation, output_padding)
        out = conv_nd_transpose(x, w, tuple(stride), pad, tuple(dilation), groups, size)
    else:
        out = conv_nd(x, w, tuple(stride), pad, tuple(dilation), groups)
    out = _add_bias(out, bias)
    if out.ndim in (4, 5) and not (x.flags.c_contiguous and w.flags.c_contiguous):
        out = _channels_last_like(x, w, out)
    return out


def _channels_last_like(x: np.ndarray, w: np.ndarray, out: np.ndarray) -> np.ndarray:
    """torch gives a convolution a channels_last output when its input or weight is laid out
    channels_last."""
    from retrograd._memory_format import channels_last, channels_last_3d, copy_as, is_contiguous_as

    fmt = channels_last if out.ndim == 4 else channels_last_3d
    for a in (x, w):
        if not a.flags.c_contiguous and a.ndim == out.ndim and is_contiguous_as(
                a.shape, tuple(s // a.itemsize for s in a.strides), fmt):
            return copy_as(out, fmt)
    return out


def _conv_input_grad_array(grad, weight, input_shape, stride, padding, dilation, transposed,
                           groups):
    """_conv_input_grad on arrays: the adjoint kernel itself (NOTE [Array formulas])."""
    if transposed:
        return _conv_fwd(grad, weight, stride, padding, dilation, groups, _spatial(input_shape))
    return _conv_tr_fwd(grad, weight, stride, padding, dilation, groups, _spatial(input_shape))


def _conv_weight_grad_array(grad, input, weight_shape, stride, padding, dilation, transposed,
                            groups):
    """_conv_weight_grad on arrays (NOTE [Array formulas])."""
    if transposed:
        return _conv_w_fwd(grad, input, stride, padding, dilation, groups, list(weight_shape))
    return _conv_w_fwd(input, grad, stride, padding, dilation, groups, list(weight_shape))


def _bias_grad_array(grad):
    """_bias_grad on arrays; 16-bit floats summed in float32, as the Tensor sum does."""
    axes = (0,) + tuple(range(2, grad.ndim))
    if grad.dtype.itemsize < 4:
        return np.add.reduce(grad, axis=axes, dtype=np.float32).astype(grad.dtype)
    return np.add.reduce(grad, axis=axes)


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


def _public_params(nd: int, stride, padding, dilation) -> tuple:
    """The public op's arguments (one value may stand for all dims) as the kernels take them."""
    def full(v):
        return list(v) * nd if len(v) == 1 else list(v)

    return full(stride), _flat((p, p) for p in full(padding)), full(dilation)


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


def _public_weight_grad_array(grad, input, weight_shape, stride, padding, dilation, transposed,
                              groups):
    s, p, d = _public_params(len(weight_shape) - 2, stride, padding, dilation)
    return _conv_weight_grad_array(grad, input, weight_shape, s, p, d, transposed, groups)


convolution = op(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    _convolution_public_fwd, method=False,
    grads={"input": _public_input_grad, "weight": _public_weight_grad, "bias": _bias_grad},
    array_grads={"input": _public_input_grad_array, "weight": _public_weight_grad_array,
                 "bias": lambda grad: _bias_grad_array(grad)})


# --- checks, as torch's convolution words them --------------------------------------------------


def _legacy(a: np.ndarray) -> str:
    from retrograd import _dtype as D

    return "torch." + D.from_numpy_dtype(a.dtype)._legacy


def expand_params(w, stride, padding, dilation, transposed, output_padding) -> tuple:
    """torch's expand_param_if_needed: one value stands for every spatial dim."""
    nd = w.ndim - 2
    out = []
    for name, value in (("stride", stride), ("padding", padding), ("dilation", dilation),
                        ("output_padding", output_padding)):
        value = list(value)
        if len(value) == 1:
            value = value * nd
        elif len(value) != nd and (transposed or name != "output_padding"):
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                               f"values to match the convolution dimensions, but got "
                               f"{name}={value}")
        out.append(value)
    return tuple(out)


def _check_conv(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch's check_shape_forward and type checks, in torch's order."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    ws = list(w.shape)
    if w.ndim != x.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight "
                           f"{ws}, but got {x.ndim}-dimensional input of size {list(x.shape)} "
                           "instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {ws} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{ws}] instead")
    if transposed:
        _check_transposed(x, ws, bias, groups)
    else:
        _check_direct(x, ws, bias, padding, dilation, groups)
    _check_types(x, w, bias)
    if transposed:  # the transposed kernel's own shape checks come last
        _check_output_padding(output_padding, stride, dilation)
        _check_transposed_size(x, ws, stride, padding, dilation, output_padding)


def _check_direct(x, ws, bias, padding, dilation, groups):
    if x.shape[1] != ws[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected input"
                           f"{list(x.shape)} to have {ws[1] * groups} channels, but got "
                           f"{x.shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != ws[0]):
        raise RuntimeError(f"Given weight of size {ws}, expected bias to be 1-dimensional with "
                           f"{ws[0]} elements, but got bias of size {list(bias.shape)} instead")
    sizes = [s + 2 * p for s, p in zip(x.shape[2:], padding)]
    spans = [d * (k - 1) + 1 for k, d in zip(ws[2:], dilation)]
    if any(s < k for s, k in zip(sizes, spans)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, sizes))}). Kernel "
            f"size: ({' x '.join(map(str, spans))}). Kernel size can't be greater than actual "
            "input size")


def _check_transposed(x, ws, bias, groups):
    if x.shape[1] != ws[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input"
                           f"{list(x.shape)} to have {ws[0]} channels, but got {x.shape[1]} "
                           "channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != ws[1] * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected bias to be "
                           f"1-dimensional with {ws[1] * groups} elements, but got bias of size "
                           f"{list(bias.shape)} instead")


def _check_transposed_size(x, ws, stride, padding, dilation, output_padding):
    size = _transposed_size(x.shape[2:], ws[2:], stride, [(p, p) for p in padding], dilation,
                            output_padding)
    if min(size, default=1) >= 1:
        return
    sizes, ins = list(size), list(x.shape[2:])
    if len(sizes) == 1:  # computed in 2-d
        sizes, ins = [1, *sizes], [1, *ins]
    raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, ins))}). Calculated "
                       f"output size per channel: ({' x '.join(map(str, sizes))}). Output size "
                       "is too small")


_AXES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _check_output_padding(output_padding, stride, dilation):
    if all(op < s or op < d for op, s, d in zip(output_padding, stride, dilation)):
        return
    if len(stride) == 1:  # torch computes a 1-d transposed convolution in 2-d
        output_padding, stride, dilation = [0, *output_padding], [1, *stride], [1, *dilation]
    names = _AXES[len(stride)]
    parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
    parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
    parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
    raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                       + " ".join(parts))


def _check_types(x, w, bias):
    if x.dtype != w.dtype:
        raise RuntimeError(f"Input type ({_legacy(x)}) and weight type ({_legacy(w)}) should be "
                           "the same or input should be a MKLDNN tensor and weight is a dense "
                           "tensor")
    if bias is not None and bias.dtype != x.dtype:
        from retrograd._ops.linalg import cpp_name

        raise RuntimeError(f"Input type ({cpp_name(x)}) and bias type ({cpp_name(bias)}) should "
                           "be the same")
    if x.dtype == np.bool_:
        raise not_implemented("slow_conv2d_cpu", x)


# --- the functional API ----------------------------------------------------------------------


def _tuple(value, n: int) -> list:
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    return [int(value)] * n


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
    warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a "
                  "zero-padded copy of the input be created", UserWarning, stacklevel=4)
    sym = [lo for lo, _ in pairs]
    _check_conv(x._data, weight._data, None if bias is None else bias._data, stride, sym,
                dilation, False, [0] * nd, groups)
    return _convolution(x, weight, bias, stride, _flat(pairs), dilation, False, [0] * nd, groups)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


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


for _fn in (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d):
    register_functional(_fn.__name__, _fn)
    register(_fn.__name__, _fn)


# --- pooling ---------------------------------------------------------------------------------


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
        raise not_implemented("max_pool2d", x)
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


_max_pool_scatter = op(
    "_max_pool_scatter(Tensor grad_output, Tensor indices, int[] self_size, bool overlap=True)"
    " -> Tensor",
    _scatter_fwd, node="MaxPool2DWithIndicesBackwardBackward0",
    grads={"grad_output": lambda grad, indices: _max_pool_gather(grad, indices)},
    function=False, method=False)

_max_pool_gather = op(
    "_max_pool_gather(Tensor self, Tensor indices) -> Tensor", _gather_fwd,
    grads={"self": lambda grad, indices, self_shape: _max_pool_scatter(grad, indices,
                                                                       list(self_shape))},
    function=False, method=False)

max_pool2d_with_indices_op = op(
    "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
    "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    _max_pool_fwd, node="MaxPool2DWithIndicesBackward0", differentiable_outputs=(True, False),
    grads={"self": lambda grad, result1, self_shape, kernel_size, stride, dilation:
           _max_pool_scatter(grad, result1, list(self_shape),
                             _overlapping(kernel_size, stride, dilation))},
    array_grads={"self": lambda grad, result1, self_shape, kernel_size, stride, dilation:
                 _scatter_fwd(grad, result1, list(self_shape),
                              _overlapping(kernel_size, stride, dilation))},
    function=False, method=False)


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
        raise not_implemented("avg_pool2d", x)
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


_AVG_ARGS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
             "divisor_override")

avg_pool2d_op = op(
    "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    _avg_pool_fwd, node="AvgPool2DBackward0",
    grads={"self": lambda grad, self_shape, kernel_size, stride, padding, ceil_mode,
           count_include_pad, divisor_override: _avg_pool2d_backward(
               grad, list(self_shape), kernel_size, stride, padding, ceil_mode,
               count_include_pad, divisor_override)},
    function=False, method=False)

_avg_pool2d_backward = op(
    "_avg_pool2d_backward(Tensor grad_output, int[] self_size, int[2] kernel_size, "
    "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, "
    "int? divisor_override) -> Tensor", _avg_pool_bwd, node="AvgPool2DBackwardBackward0",
    grads={"grad_output": lambda grad, kernel_size, stride, padding, ceil_mode,
           count_include_pad, divisor_override: avg_pool2d_op(
               grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override)},
    function=False, method=False)


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


_adaptive_avg_pool2d = op(
    "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", _adaptive_fwd,
    node="AdaptiveAvgPool2DBackward0",
    grads={"self": lambda grad, self_shape: _adaptive_avg_pool2d_backward(grad,
                                                                          list(self_shape))},
    function=False, method=False)

_adaptive_avg_pool2d_backward = op(
    "_adaptive_avg_pool2d_backward(Tensor grad_output, int[] self_size) -> Tensor",
    _adaptive_bwd, node="AdaptiveAvgPool2DBackwardBackward0",
    grads={"grad_output": lambda grad, grad_output_shape: _adaptive_avg_pool2d(
        grad, list(grad_output_shape[-2:]))},
    function=False, method=False)


# --- the functional pooling API --------------------------------------------------------------


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


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = True) -> tuple:
    k, s, p, d = _pool2d_args("max_pool2d", kernel_size, stride, padding, dilation)
    return max_pool2d_with_indices_op(input, k, s, p, d, ceil_mode)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    out, idx = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    k, s, p, _ = _pool2d_args("avg_pool2d", kernel_size, stride, padding)
    return avg_pool2d_op(input, k, s, p, ceil_mode, count_include_pad, divisor_override)


def _adaptive_size(output_size, x: Tensor, name: str) -> list:
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 2:
            raise RuntimeError(f"{name}: output_size must be 2")
        sizes = list(output_size)
    else:
        sizes = [output_size, output_size]
    return [x.shape[-2 + i] if v is None else int(v) for i, v in enumerate(sizes)]


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    size = _adaptive_size(output_size, input, "adaptive_avg_pool2d")
    nd = input.dim()
    if nd not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    if any(v < 0 for v in size):
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{size[0]}, {size[1]}}}")
    for i in range(1, nd):
        if input.shape[i] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with dimension {i} being "
                "empty")
    if input._data.dtype.kind not in "fV":
        raise not_implemented("adaptive_avg_pool2d", input._data)
    if size == [1, 1]:  # torch takes the mean for a global pool
        return input.mean((-1, -2), keepdim=True)
    return _adaptive_avg_pool2d(input, size)


# 1-d pools: torch adds a height-1 dim, pools in 2-d and squeezes it away


def _one(value, message: str, allow_empty: bool = False) -> list:
    if value is None or (allow_empty and isinstance(value, (list, tuple)) and not value):
        return []
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise RuntimeError(message.format(len(value)))
        return [int(value[0])]
    return [int(value)]


def _check_max_pool1d(input: Tensor, kernel_size, stride, padding, dilation, ceil_mode) -> tuple:
    if input.dim() not in (2, 3):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    pre = "max_pool1d() "
    k = _one(kernel_size, pre + "kernel_size must be an int, list of ints or tuple of ints of "
             "size 1 but got size {}")
    s = _one(stride, pre + "stride must be None, an int, list of ints, or tuple of ints of size 1"
             " but got size {}", allow_empty=True) or k
    p = _one(padding, pre + "padding must be an int, list of ints, or tuple of ints of size 1 "
             "but got size {}")
    d = _one(dilation, pre + "dilation must be an int, list of ints or tuple of ints of size 1 "
             "but got size {}")
    for ok, msg in ((k[0] > 0, f"kernel_size must be greater than zero, but got {k[0]}"),
                    (s[0] > 0, f"stride must be greater than zero, but got {s[0]}"),
                    (p[0] >= 0, f"padding must be non-negative, but got {p[0]}"),
                    (p[0] <= k[0] // 2, f"padding should be at most half of kernel size, but got "
                                        f"padding={p[0]} and kernel_size={k[0]}"),
                    (d[0] > 0, f"dilation must be greater than zero, but got {d[0]}")):
        if not ok:
            raise RuntimeError(pre + msg)
    ow = pool_out_size(input.shape[-1], k[0], p[0], s[0], d[0], ceil_mode)
    if ow <= 0:
        raise RuntimeError(pre + f"Invalid computed output size: {ow}")
    return k[0], s[0], p[0], d[0]


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = True) -> tuple:
    k, s, p, d = _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
    out, idx = max_pool2d_with_indices_op(input.unsqueeze(-2), [1, k], [1, s], [0, p], [1, d],
                                          ceil_mode)
    return squeeze_dim(out, -2), squeeze_dim(idx, -2)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    out, idx = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    if return_indices:
        return out, idx
    if out.requires_grad:
        return out
    # without autograd torch runs a dedicated 1-d kernel: its result is not a view
    from retrograd._ops.linalg import _unsafe_view

    return _unsafe_view(out, list(out.shape))


def _check_1d_rank(input: Tensor, name: str) -> None:
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {name})")


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    _check_1d_rank(input, "avg_pool1d")
    msg = "avg_pool1d() argument '{}' should contain one int (got {})"
    vals = []
    for name, v in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding)):
        if isinstance(v, (list, tuple)) and len(v) != 1 and not (name == "stride" and not v):
            raise RuntimeError(msg.format(name, len(v)))
        vals.append(_one(v, msg, allow_empty=True))
    k, s, p = vals
    out = avg_pool2d_op(input.unsqueeze(-2), [1] + k, [1] + (s or k), [0] + p, ceil_mode,
                        count_include_pad, None)
    return squeeze_dim(out, -2)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    _check_1d_rank(input, "adaptive_avg_pool1d")
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 1:
            raise RuntimeError("adaptive_avg_pool1d() argument 'output_size' should contain one "
                               f"int (got {len(output_size)})")
        output_size = output_size[0]
    return squeeze_dim(adaptive_avg_pool2d(input.unsqueeze(-2), (1, output_size)), -2)


for _fn in (max_pool1d, max_pool2d, max_pool1d_with_indices, max_pool2d_with_indices,
            avg_pool1d, avg_pool2d, adaptive_avg_pool1d, adaptive_avg_pool2d):
    register_functional(_fn.__name__, _fn)
for _fn in (max_pool1d, max_pool2d, max_pool1d_with_indices, avg_pool1d, adaptive_avg_pool1d):
    register(_fn.__name__, _fn)
