"""Adaptive max pooling: 2-d and 3-d as ops of their own (AdaptiveMaxPool2DBackward0,
AdaptiveMaxPool3DBackward0), 1-d as torch builds it (a height-1 2-d pool, squeezed).

Windows are torch's adaptive ones ([floor(i*n/o), ceil((i+1)*n/o))) and may overlap; the
gradient scatter-adds to the saved indices, declared as an op whose own gradient gathers.
The NumPy kernels are in kernels/pooling_nd.py.
"""

from __future__ import annotations

from retrograd._ops.kernels.pooling_nd import adaptive_max_nd, gather_nd, scatter_nd
from retrograd._ops.layout import label_entry_points, not_implemented
from retrograd._ops.linalg import squeeze_dim
from retrograd._ops.pooling import _check_1d_rank
from retrograd._ops.pooling3d import list_with_default
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor


def _declare(nsp: int):
    """adaptive_max_pool<nsp>d with its scatter (backward) and gather (double backward)."""
    dim = f"{nsp}D"
    name = f"adaptive_max_pool{nsp}d"

    def forward(x, output_size):
        if x.dtype.kind not in "fV":
            kernel = name if nsp == 2 else name + "_cpu"
            raise not_implemented(kernel, x.dtype)
        return adaptive_max_nd(x, tuple(output_size))

    scatter = op(
        f"_{name}_scatter(Tensor grad_output, Tensor indices, int[] self_size) -> Tensor",
        lambda grad, indices, self_size: scatter_nd(grad, indices, self_size, nsp),
        node=f"AdaptiveMaxPool{dim}BackwardBackward0",
        grads={"grad_output": lambda grad, indices: gather(grad, indices)},
        function=False, method=False)
    gather = op(
        f"_{name}_gather(Tensor self, Tensor indices) -> Tensor",
        lambda x, indices: gather_nd(x, indices, nsp),
        grads={"self": lambda grad, indices, self_shape: scatter(grad, indices,
                                                                 list(self_shape))},
        function=False, method=False)
    pool = op(
        f"{name}(Tensor self, int[{nsp}] output_size) -> (Tensor, Tensor)", forward,
        node=f"AdaptiveMaxPool{dim}Backward0", differentiable_outputs=(True, False),
        grads={"self": lambda grad, result1, self_shape: scatter(grad, result1,
                                                                 list(self_shape))},
        function=False, method=False)
    return pool


_adaptive_max_pool2d = _declare(2)
_adaptive_max_pool3d = _declare(3)


def _pool(input: Tensor, output_size, nsp: int) -> tuple:
    name = f"adaptive_max_pool{nsp}d"
    size = list_with_default(output_size, input)
    nd = input.dim()
    if nd not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{name}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    size = [int(v) for v in size] if isinstance(size, (list, tuple)) else [int(size)] * nsp
    if len(size) != nsp:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nsp}")
    for i in range(1, nd):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {i} being empty")
    if any(v < 0 for v in size):
        shape = list(input.shape[:-nsp]) + size
        bad = next(v for v in size if v < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    op_fn = _adaptive_max_pool2d if nsp == 2 else _adaptive_max_pool3d
    return op_fn(input, size)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    return _pool(input, output_size, 2)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    return _pool(input, output_size, 3)


def _torch_adaptive_max_pool1d(input: Tensor, output_size) -> tuple:
    """torch.adaptive_max_pool1d: (values, indices) of a height-1 2-d pool."""
    _check_1d_rank(input, "adaptive_max_pool1d")
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 1:
            raise RuntimeError("adaptive_max_pool1d() argument 'output_size' should contain one "
                               f"int (got {len(output_size)})")
        output_size = output_size[0]
    out, idx = _pool(input.unsqueeze(-2), [1, int(output_size)], 2)
    return squeeze_dim(out, -2), squeeze_dim(idx, -2)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    return _torch_adaptive_max_pool1d(input, output_size)


def _values_or_pair(with_indices):
    def pool(input: Tensor, output_size, return_indices: bool = False):
        out, idx = with_indices(input, output_size)
        return (out, idx) if return_indices else out

    pool.__name__ = with_indices.__name__.replace("_with_indices", "")
    return pool


adaptive_max_pool1d = _values_or_pair(adaptive_max_pool1d_with_indices)
adaptive_max_pool2d = _values_or_pair(adaptive_max_pool2d_with_indices)
adaptive_max_pool3d = _values_or_pair(adaptive_max_pool3d_with_indices)

for _fn in (adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d,
            adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,
            adaptive_max_pool3d_with_indices):
    register_functional(_fn.__name__, _fn)
register("adaptive_max_pool1d", _torch_adaptive_max_pool1d)
label_entry_points([_adaptive_max_pool2d, _adaptive_max_pool3d])
