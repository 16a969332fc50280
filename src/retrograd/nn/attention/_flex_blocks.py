"""The block-sparse layout behind flex_attention's BlockMask, on NumPy arrays.

A layout is "ordered": per row of blocks, a count and a list of block columns (the listed ones
first, ascending, then the rest, as torch's stable descending argsort leaves them). The dense
form is a 0/1 int32 grid of blocks. These helpers convert between the two and between an
element mask and its grid of blocks; they know no Tensor.
"""

from __future__ import annotations

import numpy as np


def ordered_to_dense(num_blocks: np.ndarray, indices: np.ndarray, num_cols: int) -> np.ndarray:
    """The 0/1 block grid (..., rows, num_cols) whose row r has the first num_blocks[r]
    columns of indices[r] set."""
    entries = indices.shape[-1]
    listed = np.arange(entries) < num_blocks[..., None]
    # unlisted entries write into one extra column, dropped at the end
    target = np.where(listed, indices, num_cols).astype(np.int64)
    dense = np.zeros(indices.shape[:-1] + (num_cols + 1,), dtype=np.int32)
    np.put_along_axis(dense, target, 1, axis=-1)
    return np.ascontiguousarray(dense[..., :num_cols])


def dense_to_ordered(dense: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(counts, column lists) of a 0/1 block grid: set columns first, each part ascending."""
    dense = dense.astype(np.int32)
    counts = dense.sum(axis=-1, dtype=np.int32)
    # a stable ascending sort of -dense is torch's stable descending sort of dense
    order = np.argsort(-dense, axis=-1, kind="stable").astype(np.int32)
    return counts, order


def transpose_ordered(num_blocks: np.ndarray, indices: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The column-major layout (q blocks per kv block) of a row-major one."""
    dense = ordered_to_dense(num_blocks, indices, indices.shape[-1])
    return dense_to_ordered(np.swapaxes(dense, -2, -1))


def adjust_ordered(num_blocks: np.ndarray, indices: np.ndarray, rows: int, cols: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Crop a layout to its first `rows` x `cols` blocks (BlockMask._adjust)."""
    indices = indices[:, :, :rows, :cols]
    num_blocks = np.minimum(num_blocks[:, :, :rows], cols)
    num_blocks = (indices < num_blocks[..., None]).sum(axis=-1).astype(np.int32)
    return num_blocks, indices


def mask_to_blocks(mask: np.ndarray, q_block: int, kv_block: int, separate_full: bool
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """Grids of partial (some but, with separate_full, not all elements kept) and full blocks
    of a (B, H, Q, KV) element mask, padded with False to whole blocks; int8 as torch's."""
    while mask.ndim < 4:
        mask = mask[None]
    b, h, q, kv = mask.shape
    rows, cols = -(-q // q_block), -(-kv // kv_block)
    padded = np.zeros((b, h, rows * q_block, cols * kv_block), dtype=bool)
    padded[:, :, :q, :kv] = mask
    kept = padded.reshape(b, h, rows, q_block, cols, kv_block).sum(axis=(3, 5))
    if separate_full:
        whole = q_block * kv_block
        return ((kept > 0) & (kept < whole)).astype(np.int8), (kept == whole).astype(np.int8)
    return (kept > 0).astype(np.int8), None


def blocks_to_elements(grid: np.ndarray, q_block: int, kv_block: int, q_len: int,
                       kv_len: int) -> np.ndarray:
    """Each block of a (..., rows, cols) grid spread over its elements, cropped to
    (..., q_len, kv_len); rows or columns missing from the grid count as empty."""
    rows, cols = -(-q_len // q_block), -(-kv_len // kv_block)
    full = np.zeros(grid.shape[:-2] + (rows, cols), dtype=bool)
    r, c = min(rows, grid.shape[-2]), min(cols, grid.shape[-1])
    full[..., :r, :c] = grid[..., :r, :c] != 0
    row_of = (np.arange(q_len) // q_block)[:, None]
    col_of = (np.arange(kv_len) // kv_block)[None, :]
    return full[..., row_of, col_of]
