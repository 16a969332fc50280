"""NumPy kernels of embedding lookups, their dense backward (segment sums, frequency scaling) and
one_hot. retrograd._ops.embedding declares the ops. No Tensor here: plain arrays and Python
numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.layout import tensor_type_name


def _check_indices(indices: np.ndarray) -> None:
    if indices.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{tensor_type_name(indices.dtype)} instead "
                           "(while checking arguments for embedding)")


def _embedding_forward(weight, indices, padding_idx, scale_grad_by_freq, sparse):
    _check_indices(indices)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    n = weight.shape[0]
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise IndexError("index out of range in self")
    return np.take(weight, indices, axis=0)


def _freq_scale(flat: np.ndarray, num_weights: int) -> np.ndarray:
    counts = np.bincount(flat, minlength=num_weights)
    return 1.0 / counts[flat]


def _segment_sum(flat: np.ndarray, g: np.ndarray, num_weights: int) -> np.ndarray:
    """out[i] = sum of the rows of g whose index is i (sorted runs, faster than np.add.at)."""
    out = np.zeros((num_weights, g.shape[1]), g.dtype)
    if flat.size:
        order = np.argsort(flat, kind="stable")
        ids = flat[order]
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        out[ids[starts]] = np.add.reduceat(g[order], starts, axis=0)
    return out


def _embedding_backward_forward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    flat = indices.reshape(-1).astype(np.int64, copy=False)
    g = grad.reshape(flat.size, grad.shape[-1])
    if scale_grad_by_freq:
        g = g * _freq_scale(flat, num_weights)[:, None].astype(g.dtype)
    out = _segment_sum(flat, g, num_weights)
    if padding_idx >= 0:
        out[padding_idx] = 0
    return out


def _one_hot_forward(t, num_classes):
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if t.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return np.zeros(t.shape + (num_classes,), np.int64)
    if t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(t.max()) + 1
    elif t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    # zeros with a one written per index (a comparison against every class would build and
    # convert an (n, num_classes) mask: 5x the time)
    out = np.zeros(t.shape + (num_classes,), np.int64)
    out.reshape(-1, num_classes)[np.arange(t.size), t.reshape(-1)] = 1
    return out
