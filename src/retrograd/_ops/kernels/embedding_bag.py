"""NumPy kernels of embedding_bag: which bag each index falls in, the per-bag sum / mean / max
of the indexed rows, and the per-entry factor its gradient scales rows by. retrograd._ops
.embedding_bag declares the op. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.layout import tensor_type_name

_SUM, _MEAN, _MAX = 0, 1, 2
_OUT_OF_RANGE = ("Expected i < index_size to be true, but got false.  (Could this error message "
                 "be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_offsets(offsets: np.ndarray, n: int) -> None:
    if offsets.size:
        if offsets[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                f"from position 0. However, got {int(offsets[0])}\n"
                f"[ {tensor_type_name(offsets.dtype)}{{}} ]")
        if offsets[-1] > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                               f"offsets[-1] of {int(offsets[-1])}")
        if (np.diff(offsets) < 0).any():
            raise RuntimeError(_OUT_OF_RANGE)


def bag_layout(indices: np.ndarray, offsets: np.ndarray, include_last_offset: bool,
               num_weights: int, padding_idx: int) -> tuple:
    """(bag of each index, whether it counts, entries per bag, number of bags). An index
    counts unless it is padding or, with include_last_offset, at or past the last offset
    (torch documents that offset as the input's length; past it its kernels disagree)."""
    n = indices.size
    _check_offsets(offsets, n)
    if n and (indices.min() < 0 or indices.max() >= num_weights):
        raise RuntimeError(_OUT_OF_RANGE)
    nbags = max(offsets.size - 1, 0) if include_last_offset else offsets.size
    starts = offsets[:nbags].astype(np.int64)
    end = int(offsets[-1]) if include_last_offset and offsets.size else n
    bag = np.searchsorted(starts, np.arange(n), side="right") - 1
    counts = (bag >= 0) & (np.arange(n) < end)
    if padding_idx >= 0:
        counts &= indices != padding_idx
    bag = np.clip(bag, 0, max(nbags - 1, 0))
    sizes = np.bincount(bag[counts], minlength=nbags).astype(np.int64)
    return bag.astype(np.int64), counts, sizes, nbags


def embedding_bag_forward(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                          per_sample_weights, include_last_offset, padding_idx):
    idx = indices.astype(np.int64, copy=False)
    bag, counts, sizes, nbags = bag_layout(idx, offsets, include_last_offset, weight.shape[0],
                                           padding_idx)
    dim = weight.shape[1]
    out = np.zeros((nbags, dim), weight.dtype)
    max_indices = np.zeros((nbags, dim) if mode == _MAX else (nbags,), np.int64)
    # bags are contiguous runs of the input: each reduction is one reduceat over the rows
    # (uncounted rows neutral); empty bags, which reduceat would give their next row, stay 0
    starts = offsets[:nbags].astype(np.int64)
    ends = np.append(starts[1:], idx.size)
    filled = starts < ends
    if mode == _MAX:
        rows = np.where(counts[:, None], weight[idx], -np.inf).astype(weight.dtype, copy=False)
        if filled.any():
            out[filled] = np.maximum.reduceat(rows, starts[filled], axis=0)
        out[sizes == 0] = 0
        if filled.any():  # per column, the first row of each bag reaching its maximum
            n = idx.size
            hit = counts[:, None] & (rows == out[bag])
            first = np.where(hit, np.arange(n)[:, None], n)
            at = np.full((nbags, dim), n, np.int64)
            at[filled] = np.minimum.reduceat(first, starts[filled], axis=0)
            max_indices = np.where(at < n, idx[np.minimum(at, n - 1)], 0)
    else:
        rows = weight[idx] * counts[:, None].astype(weight.dtype)
        if per_sample_weights is not None:
            rows = rows * per_sample_weights[:, None]
        if filled.any():
            out[filled] = np.add.reduceat(rows, starts[filled], axis=0)
        if mode == _MEAN:
            out /= np.maximum(sizes, 1)[:, None].astype(weight.dtype)
            max_indices = sizes.copy()
    if mode == _SUM:  # torch's sum kernel leaves the bag sizes unset: zeros
        sizes = np.zeros_like(sizes)
    return out, bag, sizes, max_indices


def entry_scale(indices, offset2bag, bag_size, num_weights, mode, scale_grad_by_freq,
                counts) -> np.ndarray:
    """The factor each index's row gradient gets: 1 (sum), 1/bag size (mean), 1/frequency of
    the index (scale_grad_by_freq), 0 where the index does not count."""
    factor = counts.astype(np.float64)
    if mode == _MEAN:
        factor /= np.maximum(bag_size[offset2bag], 1)
    if scale_grad_by_freq:
        factor /= _cpu_frequency(indices, num_weights)[indices]
    return factor


def _cpu_frequency(indices: np.ndarray, num_weights: int) -> np.ndarray:
    """The frequency torch's CPU kernel divides each row's gradient by: for the k-th smallest
    distinct index it reads the count of the k-th entry of the sorted indices (not of the
    index itself), so repeated indices shift the divisors of the larger ones. Kept for parity."""
    counts = np.bincount(indices, minlength=num_weights)
    distinct = np.unique(indices)
    used = np.ones(num_weights, np.int64)
    used[distinct] = counts[np.sort(indices)[:distinct.size]]
    return used
