"""Pooling (max, average, adaptive average; 1d and 2d), with NumPy kernels.

As convolution does, pooling declares each kernel as an op whose gradient is its adjoint: max
pooling gathers by indices and scatters back, average pooling is its own adjoint up to the
divisor, adaptive average pooling is two small matmuls.

The NumPy kernels the declarations run are in kernels/pooling.py.
"""

from __future__ import annotations

from retrograd._memory_format import channels_last
from retrograd._ops.kernels.pooling import (
    _adaptive_bwd,
    _adaptive_fwd,
    _avg_pool_bwd,
    _avg_pool_fwd,
    _gather_fwd,
    _max_pool_fwd,
    _one,
    _overlapping,
    _pool2d_args,
    _scatter_fwd,
    pool_out_size,
)
from retrograd._ops.layout import not_implemented
from retrograd._ops.linalg import squeeze_dim
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor

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
    if size == [1, 1]:  # a global pool: torch takes the mean, before it checks the rank
        return _global_mean(input)
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
        raise not_implemented("adaptive_avg_pool2d", input._data.dtype)
    return _adaptive_avg_pool2d(input, size)


def _global_mean(input: Tensor) -> Tensor:
    """A 1x1 adaptive average pool as torch computes it: the mean over the last two dims (of
    an input of any rank from 2), restrided in place to channels-last strides for an input in
    that layout."""
    out = input.mean((-1, -2), keepdim=True)
    if input.dim() == 4 and not input.is_contiguous() and \
            input.is_contiguous(memory_format=channels_last):
        n, c = input.shape[0], input.shape[1]
        out.as_strided_((n, c, 1, 1), (c, 1, c, c))
    return out


# 1-d pools: torch adds a height-1 dim, pools in 2-d and squeezes it away


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
    if not return_indices and not input.requires_grad and \
            input._data.dtype.kind not in "fV":
        # torch's kernel for this case (no indices, no autograd) is floating only
        _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
        raise not_implemented("max_pool1d_impl", input._data.dtype)
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
