"""Embedding lookups (embedding, its dense backward, max_norm renormalisation) and one_hot.

The NumPy kernels the declarations run are in kernels/embedding.py.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels.embedding import (
    _embedding_backward_forward,
    _embedding_forward,
    _freq_scale,
    _one_hot_forward,
)
from retrograd._ops.layout import inplace_forward, tensor_type_name
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor, _wrap

# --- embedding -------------------------------------------------------------------------------


def _embedding_double_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The adjoint of the scatter-add: gather rows, zero padding rows, same frequency scale."""
    flat = indices._data.reshape(-1).astype(np.int64, copy=False)
    out = embedding(grad, indices)
    factor = np.ones(flat.size, grad._data.dtype)
    if scale_grad_by_freq:
        factor = _freq_scale(flat, num_weights).astype(factor.dtype)
    if padding_idx >= 0:
        factor[flat == padding_idx] = 0
    if not scale_grad_by_freq and padding_idx < 0:
        return out
    return out * _wrap(factor.reshape(indices._data.shape + (1,)))


embedding_dense_backward = op(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
    "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor", _embedding_backward_forward,
    grads={"grad_output": _embedding_double_backward}, function=False, method=False)

embedding = op(
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
    "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor", _embedding_forward,
    grads={"weight": lambda grad, weight_shape, indices, padding_idx, scale_grad_by_freq:
           embedding_dense_backward(grad, indices, weight_shape[0], padding_idx,
                                    scale_grad_by_freq)},
    array_grads={"weight": lambda grad, weight_shape, indices, padding_idx, scale_grad_by_freq:
                 _embedding_backward_forward(grad, indices, weight_shape[0], padding_idx,
                                             scale_grad_by_freq)},
    method=False)


def _renorm_array(w: np.ndarray, indices: np.ndarray, max_norm: float,
                  norm_type: float) -> np.ndarray:
    """Rows of w used by `indices` rescaled to norm <= max_norm, in place; returns w."""
    rows = np.unique(indices.reshape(-1))
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
    big = norms > max_norm
    scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
    w[rows[big]] *= scale[:, None]
    return w


def _renorm_rows(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """torch's embedding_renorm_ as F.embedding runs it: in place, no history."""
    _renorm_array(weight._data, indices._data, max_norm, norm_type)
    if weight._version_counter is not None:
        weight._version_counter.version += 1


def _renormed(w: np.ndarray, indices: np.ndarray, max_norm: float,
              norm_type: float) -> np.ndarray:
    if indices.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{tensor_type_name(indices.dtype)} instead (while checking "
                           "arguments for embedding_renorm_)")
    return _renorm_array(w.copy(), indices, max_norm, norm_type)


def _renorm_no_derivative(grad):
    raise NotImplementedError("the derivative for 'embedding_renorm' is not implemented.")


# torch.embedding_renorm_ (namespace only): the same renormalisation as an in-place op, whose
# node (EmbeddingRenormBackward0) refuses to differentiate
embedding_renorm_ = op(
    "embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) "
    "-> Tensor(a!)", inplace_forward(_renormed), grads={"self": _renorm_no_derivative},
    method=False)


def _f_embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    return embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


register_functional("embedding", _f_embedding)


# --- one_hot ---------------------------------------------------------------------------------


one_hot = op("one_hot(Tensor self, int num_classes=-1) -> Tensor", _one_hot_forward,
             function=False, method=False)
register_functional("one_hot", one_hot)
