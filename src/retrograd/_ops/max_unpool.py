"""Max unpooling (the partial inverse of max pooling): values placed at their pooling indices
in a zero output, 1-d (via 2-d, as torch), 2-d and 3-d. Nodes MaxUnpool2DBackward0 and
MaxUnpool3DBackward0; the gradient gathers at the indices (the max-pooling gather ops)."""

from __future__ import annotations

from retrograd._ops.kernels.max_unpool import max_unpool_forward
from retrograd._ops.layout import label_entry_points
from retrograd._ops.pooling import _max_pool_gather
from retrograd._ops.pooling3d import _max_pool3d_gather
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor

_max_unpool2d = op(
    "max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor",
    lambda x, indices, output_size: max_unpool_forward(x, indices, output_size, 2),
    grads={"self": lambda grad, indices: _max_pool_gather(grad, indices)},
    function=False, method=False)

_max_unpool3d = op(
    "max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, "
    "int[3] padding) -> Tensor",
    lambda x, indices, output_size, stride, padding: max_unpool_forward(x, indices,
                                                                        output_size, 3),
    grads={"self": lambda grad, indices: _max_pool3d_gather(grad, indices)},
    function=False, method=False)


def _as_list(value, n: int) -> list:
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value] * (n if len(value) == 1 else 1)
    return [int(value)] * n


def _output_size(input: Tensor, kernel: list, stride: list, padding: list,
                 output_size) -> list:
    """torch's _unpool_output_size: the size pooling came from, or a checked output_size."""
    n = len(kernel)
    shape = input.shape
    default = [(shape[-n + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        size = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be '
                                 f'between {low} and {high})')
        size = output_size
    for d in range(n):
        if size[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={size[d]}")
    return list(size)


def _geometry(n: int, kernel_size, stride, padding) -> tuple:
    k = _as_list(kernel_size, n)
    s = _as_list(stride, n) if stride is not None else k
    return k, s, _as_list(padding, n)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    k, s, p = _geometry(1, kernel_size, stride, padding)
    size = _output_size(input, k, s, p, output_size) + [1]
    return _max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    k, s, p = _geometry(2, kernel_size, stride, padding)
    return _max_unpool2d(input, indices, _output_size(input, k, s, p, output_size))


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    k, s, p = _geometry(3, kernel_size, stride, padding)
    return _max_unpool3d(input, indices, _output_size(input, k, s, p, output_size), s, p)


for _fn in (max_unpool1d, max_unpool2d, max_unpool3d):
    register_functional(_fn.__name__, _fn)
label_entry_points([_max_unpool2d, _max_unpool3d])
