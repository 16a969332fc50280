"""3-d pooling: max (with indices), average and adaptive average, over (N, C, D, H, W) or
(C, D, H, W) input, as torch's *_pool3d ops with their nodes (MaxPool3DWithIndicesBackward0,
AvgPool3DBackward0, AdaptiveAvgPool3DBackward0).

As the 2-d pools in pooling.py, each gradient is the kernel's adjoint declared as an op (max:
scatter to the indices, gathered back for double backward; average: spread the window means).
The NumPy kernels are in kernels/pooling_nd.py.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels.conv import _pad
from retrograd._ops.kernels.pooling_nd import (
    adaptive_avg_backward_nd,
    adaptive_avg_nd,
    avg_divisor_nd,
    avg_pool_backward_nd,
    gather_nd,
    max_pool_geometry,
    scatter_nd,
    window_max_nd,
    window_sum_nd,
)
from retrograd._ops.layout import label_entry_points, not_implemented
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor

_RANK_3D = "non-empty 4D or 5D (batch mode) tensor expected for input"


def _check_rank(x: np.ndarray) -> None:
    if x.ndim not in (4, 5):
        raise RuntimeError(_RANK_3D)


def _too_small(x: np.ndarray, out_sp: tuple) -> None:
    if min(out_sp) < 1:
        c = x.shape[-4]
        sizes = "x".join(str(v) for v in x.shape[-3:])
        outs = "x".join(str(v) for v in out_sp)
        raise RuntimeError(f"Given input size: ({c}x{sizes}). Calculated output size: "
                           f"({c}x{outs}). Output size is too small")


# --- max pooling ------------------------------------------------------------------------------


def _max_pool3d_forward(x, kernel_size, stride, padding, dilation, ceil_mode):
    k, s = kernel_size, stride or kernel_size
    _check_rank(x)
    out_sp, pads = max_pool_geometry(x.shape[-3:], k, s, padding, dilation, ceil_mode)
    _too_small(x, out_sp)
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(
                "max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch "
                f"dimensions to have positive length, but input has a shape of {list(x.shape)} "
                f"and non-batch dimension {i - (x.ndim - 4)} has length zero!")
    if x.dtype == np.bool_:
        raise not_implemented("max_pool3d", x.dtype)
    return window_max_nd(x, k, s, padding, dilation, out_sp, pads)


_max_pool3d_scatter = op(
    "_max_pool3d_scatter(Tensor grad_output, Tensor indices, int[] self_size) -> Tensor",
    lambda grad, indices, self_size: scatter_nd(grad, indices, self_size, 3),
    node="MaxPool3DWithIndicesBackwardBackward0",
    grads={"grad_output": lambda grad, indices: _max_pool3d_gather(grad, indices)},
    function=False, method=False)

_max_pool3d_gather = op(
    "_max_pool3d_gather(Tensor self, Tensor indices) -> Tensor",
    lambda x, indices: gather_nd(x, indices, 3),
    grads={"self": lambda grad, indices, self_shape: _max_pool3d_scatter(grad, indices,
                                                                         list(self_shape))},
    function=False, method=False)

max_pool3d_with_indices_op = op(
    "max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], "
    "int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    _max_pool3d_forward, node="MaxPool3DWithIndicesBackward0",
    differentiable_outputs=(True, False),
    grads={"self": lambda grad, result1, self_shape: _max_pool3d_scatter(grad, result1,
                                                                         list(self_shape))},
    function=False, method=False)


# --- average pooling --------------------------------------------------------------------------


def _avg_pool3d_forward(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    k, s, p = kernel_size, stride or kernel_size, padding
    _check_rank(x)
    sizes = x.shape[-3:]
    out_sp, pads = max_pool_geometry(sizes, k, s, p, (1, 1, 1), ceil_mode)
    if any(n < ki for n, ki in zip(sizes, k)):
        raise RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller "
                           f"than kernel size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    _too_small(x, out_sp)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if x.dtype.kind not in "fV" and x.dtype != np.int64:
        raise not_implemented("avg_pool3d_out_frame", x.dtype)
    total = window_sum_nd(_pad(x, pads), k, s, out_sp)
    div = avg_divisor_nd(sizes, out_sp, k, s, p, count_include_pad, divisor_override)
    if total.dtype.kind == "i":  # C++ integer division truncates toward zero
        return np.trunc(total / div).astype(total.dtype)
    return np.divide(total, np.asarray(div, dtype=total.dtype), out=total)


def _avg_pool3d_backward_forward(grad, self_size, kernel_size, stride, padding, ceil_mode,
                                 count_include_pad, divisor_override):
    return avg_pool_backward_nd(grad, self_size, kernel_size, stride or kernel_size, padding,
                                count_include_pad, divisor_override)


avg_pool3d_op = op(
    "avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
    "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    _avg_pool3d_forward, node="AvgPool3DBackward0",
    grads={"self": lambda grad, self_shape, kernel_size, stride, padding, ceil_mode,
           count_include_pad, divisor_override: _avg_pool3d_backward(
               grad, list(self_shape), kernel_size, stride, padding, ceil_mode,
               count_include_pad, divisor_override)},
    function=False, method=False)

_avg_pool3d_backward = op(
    "_avg_pool3d_backward(Tensor grad_output, int[] self_size, int[3] kernel_size, "
    "int[3] stride, int[3] padding, bool ceil_mode, bool count_include_pad, "
    "int? divisor_override) -> Tensor", _avg_pool3d_backward_forward,
    node="AvgPool3DBackwardBackward0",
    grads={"grad_output": lambda grad, kernel_size, stride, padding, ceil_mode,
           count_include_pad, divisor_override: avg_pool3d_op(
               grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override)},
    function=False, method=False)


# --- adaptive average pooling -----------------------------------------------------------------


_adaptive_avg_pool3d = op(
    "_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
    adaptive_avg_nd, node="AdaptiveAvgPool3DBackward0",
    grads={"self": lambda grad, self_shape: _adaptive_avg_pool3d_backward(grad,
                                                                          list(self_shape))},
    function=False, method=False)

_adaptive_avg_pool3d_backward = op(
    "_adaptive_avg_pool3d_backward(Tensor grad_output, int[] self_size) -> Tensor",
    lambda grad, self_size: adaptive_avg_backward_nd(grad, self_size, 3),
    node="AdaptiveAvgPool3DBackwardBackward0",
    grads={"grad_output": lambda grad, grad_output_shape: _adaptive_avg_pool3d(
        grad, list(grad_output_shape[-3:]))},
    function=False, method=False)


# --- the functional API -----------------------------------------------------------------------


def _triple(value, message: str, allow_empty: bool = False) -> list:
    if value is None or (allow_empty and isinstance(value, (list, tuple)) and not value):
        return []
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return [int(value[0])] * 3
        if len(value) != 3:
            raise RuntimeError(message)
        return [int(v) for v in value]
    return [int(value)] * 3


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple:
    pre = "max_pool3d: "
    k = _triple(kernel_size, pre + "kernel_size must either be a single int, or a tuple of three "
                "ints")
    s = _triple(stride, pre + "stride must either be omitted, a single int, or a tuple of three "
                "ints", allow_empty=True)
    p = _triple(padding, pre + "padding must either be a single int, or a tuple of three ints")
    d = _triple(dilation, pre + "dilation must be either a single int, or a tuple of three ints")
    return max_pool3d_with_indices_op(input, k, s or k, p, d, ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    pre = "avg_pool3d: "
    k = _triple(kernel_size, pre + "kernel_size must be a single int, or a tuple of three ints")
    s = _triple(stride, pre + "stride must be omitted, a single int, or a tuple of three ints",
                allow_empty=True)
    p = _triple(padding, pre + "padding must be a single int, or a tuple of three ints")
    return avg_pool3d_op(input, k, s or k, p, ceil_mode, count_include_pad, divisor_override)


def list_with_default(output_size, input: Tensor):
    """torch's _list_with_default: None entries of output_size take the input's size."""
    if not isinstance(output_size, (list, tuple)):
        return output_size
    sizes = input.shape
    if len(sizes) <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    tail = sizes[len(sizes) - len(output_size):]
    return [d if v is None else v for v, d in zip(output_size, tail)]


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    size = list_with_default(output_size, input)
    if isinstance(size, (list, tuple)):
        if len(size) != 3:
            raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
        size = [int(v) for v in size]
    else:
        size = [int(size)] * 3
    nd = input.dim()
    if nd not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{list(input.shape)}")
    for i in range(1, nd):
        if input.shape[i] == 0:
            raise RuntimeError(
                "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with dimension {i} being "
                "empty")
    if size == [1, 1, 1]:  # torch takes the mean for a global pool
        return input.mean((-1, -2, -3), keepdim=True)
    if input._data.dtype.kind not in "fV":
        raise not_implemented("adaptive_avg_pool3d_cpu", input._data.dtype)
    return _adaptive_avg_pool3d(input, size)


for _fn in (max_pool3d, max_pool3d_with_indices, avg_pool3d, adaptive_avg_pool3d):
    register_functional(_fn.__name__, _fn)
register("max_pool3d", max_pool3d)
label_entry_points([max_pool3d_with_indices_op, avg_pool3d_op, _adaptive_avg_pool3d])
