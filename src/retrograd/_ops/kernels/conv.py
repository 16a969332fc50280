"""NumPy kernels of convolution: im2col windows, the forward, transposed and weight kernels
(depthwise too), bias and layout helpers and torch's argument checks. retrograd._ops.conv
declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

from itertools import product as iproduct
from math import prod

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from retrograd._ops.kernels.linalg import cpp_name, np_matmul
from retrograd._ops.layout import not_implemented, tensor_type_name, type_name

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


def _public_params(nd: int, stride, padding, dilation) -> tuple:
    """The public op's arguments (one value may stand for all dims) as the kernels take them."""
    def full(v):
        return list(v) * nd if len(v) == 1 else list(v)

    return full(stride), _flat((p, p) for p in full(padding)), full(dilation)


def _public_weight_grad_array(grad, input, weight_shape, stride, padding, dilation, transposed,
                              groups):
    s, p, d = _public_params(len(weight_shape) - 2, stride, padding, dilation)
    return _conv_weight_grad_array(grad, input, weight_shape, s, p, d, transposed, groups)


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


def _check_types(x, w, bias):
    if x.dtype != w.dtype:
        if x.dtype != np.float32 or x.shape[0] == 1:
            # torch checks float32 batches of more than one in its MKLDNN path, the rest in
            # the generic kernel: each says it its own way
            raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found "
                               f"{type_name(w.dtype)}")
        raise RuntimeError(f"Input type ({tensor_type_name(x.dtype)}) and weight type "
                           f"({tensor_type_name(w.dtype)}) should be the same or input should be "
                           "a MKLDNN tensor and weight is a dense tensor")
    if bias is not None and bias.dtype != x.dtype:
        raise RuntimeError(f"Input type ({cpp_name(x)}) and bias type ({cpp_name(bias)}) should "
                           "be the same")
    if x.dtype == np.bool_:
        raise not_implemented("slow_conv2d_cpu", x.dtype)


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


def _tuple(value, n: int) -> list:
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    return [int(value)] * n
