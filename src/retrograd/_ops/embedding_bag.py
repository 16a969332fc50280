"""embedding_bag: sums, means or maxima of bags of embedding rows without building the
per-index rows tensor, as torch's _embedding_bag (node EmbeddingBagBackward0).

Its gradient is written with retrograd ops (index_add of the bag gradients to the used rows,
each scaled by a constant per-entry factor; scatter_add to the selected rows for max), so it
differentiates again. The NumPy kernels are in kernels/embedding_bag.py.
"""

from __future__ import annotations

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._ops import comparison as C
from retrograd._ops import pointwise as P
from retrograd._ops.embedding import _renorm_rows
from retrograd._ops.kernels.embedding_bag import bag_layout, embedding_bag_forward, entry_scale
from retrograd._ops.layout import label_entry_points, tensor_type_name
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor

_MODES = {"sum": 0, "mean": 1, "max": 2}


def _entry_scale_forward(indices, offsets, bag_size, num_weights, mode, scale_grad_by_freq,
                         include_last_offset, padding_idx):
    idx = indices.astype(np.int64, copy=False)
    bag, counts, _, _ = bag_layout(idx, offsets, include_last_offset, num_weights, padding_idx)
    return entry_scale(idx, bag, bag_size, num_weights, mode, scale_grad_by_freq, counts)


_entry_scale = op(
    "_embedding_bag_entry_scale(Tensor indices, Tensor offsets, Tensor bag_size, "
    "int num_weights, int mode, bool scale_grad_by_freq, bool include_last_offset, "
    "int padding_idx) -> Tensor", _entry_scale_forward, function=False, method=False)


def _weight_grad(grad, weight_shape, indices, offsets, result1, result2, result3,
                 scale_grad_by_freq, mode, per_sample_weights, include_last_offset,
                 padding_idx):
    zeros = grad.new_zeros(tuple(weight_shape))
    if grad.shape[0] == 0 or indices.numel() == 0:
        return zeros
    if mode == 2:  # each column's maximum came from one row
        nonempty = C.gt(result2, 0).unsqueeze(1)
        return zeros.scatter_add(0, result3, P.where(nonempty, grad, 0.0))
    factor = _entry_scale(indices, offsets, result2, weight_shape[0], mode, scale_grad_by_freq,
                          include_last_offset, padding_idx).to(grad.dtype)
    if per_sample_weights is not None:
        factor = factor * per_sample_weights
    rows = grad.index_select(0, result1) * factor.unsqueeze(1)
    return zeros.index_add(0, indices.long(), rows)


def _per_sample_weights_grad(grad, weight, indices, offsets, result1, result2,
                             include_last_offset, padding_idx):
    if grad.shape[0] == 0 or indices.numel() == 0:
        return grad.new_zeros((indices.numel(),))
    counts = _entry_scale(indices, offsets, result2, weight.shape[0], 0, False,
                          include_last_offset, padding_idx).to(grad.dtype)
    used = grad.index_select(0, result1) * weight.index_select(0, indices.long())
    return used.sum(1) * counts


_embedding_bag = op(
    "_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, "
    "bool scale_grad_by_freq=False, int mode=0, bool sparse=False, "
    "Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) "
    "-> (Tensor, Tensor, Tensor, Tensor)", embedding_bag_forward,
    differentiable_outputs=(True, False, False, False),
    grads={"weight": _weight_grad, "per_sample_weights": _per_sample_weights_grad},
    function=False, method=False)


def _check_types(weight: Tensor, indices: Tensor, offsets: Tensor,
                 per_sample_weights: Tensor | None) -> None:
    where = " (while checking arguments for embedding_bag)"
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t._data.dtype not in (np.int64, np.int32):
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the "
                               "following scalar types: Long, Int; but got "
                               f"{tensor_type_name(t._data.dtype)} instead{where}")
    if weight._data.dtype.kind not in "fV":
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the "
                           "following scalar types: Half, BFloat16, Float, Double; but got "
                           f"{tensor_type_name(weight._data.dtype)} instead{where}")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as "
                           "tensor for argument #1 'per_sample_weights'; but type "
                           f"{tensor_type_name(weight._data.dtype)} does not equal "
                           f"{tensor_type_name(per_sample_weights._data.dtype)}{where}")


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"  # torch's message names its own Size class


def _padding(padding_idx: int | None, n: int) -> int:
    if padding_idx is None:
        return -1
    if not -n <= padding_idx < n:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} through "
                           f"{n - 1}, but got {padding_idx}")
    return padding_idx + n if padding_idx < 0 else padding_idx


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    if weight._data.dtype == np.int64 and input.is_floating_point():
        _ws.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                 "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                 "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({_size(per_sample_weights)}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({_size(input)})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        from retrograd._ops.creation import arange

        offsets = arange(0, input.numel(), input.shape[1], dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    _check_types(weight, input, offsets, per_sample_weights)
    pad = _padding(padding_idx, weight.shape[0])
    out = _embedding_bag(weight, input, offsets, scale_grad_by_freq, _MODES[mode], sparse,
                         per_sample_weights, include_last_offset, pad)
    return out[0]


def embedding_bag_native(weight: Tensor, indices: Tensor, offsets: Tensor,
                         scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                         per_sample_weights: Tensor | None = None,
                         include_last_offset: bool = False,
                         padding_idx: int | None = None) -> tuple:
    """torch.embedding_bag: the kernel's four outputs (bag values, each entry's bag, the bag
    sizes, max mode's chosen rows) with mode as 0 (sum), 1 (mean) or 2 (max)."""
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    _check_types(weight, indices, offsets, per_sample_weights)
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                          per_sample_weights, include_last_offset,
                          -1 if padding_idx is None else padding_idx)


register_functional("embedding_bag", embedding_bag)
register("embedding_bag", embedding_bag_native)
register("_embedding_bag", _embedding_bag)
label_entry_points([_embedding_bag])
