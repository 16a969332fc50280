"""Matrices built from other tensors or sizes: block_diag (BlockDiagBackward0), vander (a
composite of cumprod, cat and flip), tril_indices / triu_indices (index factories, no gradient).
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._layout import check_layout
from retrograd._ops.creation import ones
from retrograd._ops.layout import not_implemented, result_dtype
from retrograd._ops.registry import op, register
from retrograd._ops.shape import cat, slice_op
from retrograd._tensor import Tensor, _wrap

BLOCK_RANK = ("torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {} has {} "
              "dimensions")
VANDER_RANK = "x must be a one-dimensional tensor."
VANDER_N = "N must be non-negative."
NEGATIVE_SIZE = "{} must be non-negative, got{}"


# --- block_diag -----------------------------------------------------------------------------------


def _as_block(shape: tuple) -> tuple:
    """The (rows, cols) block a 0-, 1- or 2-d input fills."""
    if len(shape) == 2:
        return shape
    return (1, shape[0]) if shape else (1, 1)


def _block_diag_forward(arrays: list) -> np.ndarray:
    for k, a in enumerate(arrays):
        if a.ndim > 2:
            raise RuntimeError(BLOCK_RANK.format(k, a.ndim))
    dtype = result_dtype(list(arrays)).np if arrays else D.get_default_dtype().np
    blocks = [_as_block(a.shape) for a in arrays]
    # no blocks at all still gives torch's one empty row
    rows = sum(b[0] for b in blocks) if arrays else 1
    out = np.zeros((rows, sum(b[1] for b in blocks)), dtype)
    row = col = 0
    for a, (r, c) in zip(arrays, blocks):
        out[row:row + r, col:col + c] = a.reshape(r, c)
        row += r
        col += c
    return out


def _block_diag_backward(grad, tensors_shape):
    out, row, col = [], 0, 0
    for shape in tensors_shape:
        r, c = _as_block(tuple(shape))
        g = slice_op(slice_op(grad, 0, row, row + r, 1), 1, col, col + c, 1)
        out.append(g if len(shape) == 2 else g.reshape(shape))
        row += r
        col += c
    return out


_block_diag = op("block_diag(Tensor[] tensors) -> Tensor", _block_diag_forward,
                 grads={"tensors": _block_diag_backward}, function=False, method=False)


def block_diag(*tensors: Tensor) -> Tensor:
    """torch.block_diag: the inputs along the diagonal of a zero matrix (a 0-d input is a 1x1
    block, a vector a one-row block)."""
    return _block_diag(list(tensors))


# --- vander -----------------------------------------------------------------------------------


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """torch.vander: the columns x**0 ... x**(N-1) (highest power first unless increasing): a
    column of ones beside a running product, flipped (FlipBackward0, as torch).

    torch writes the product into a ones matrix in place (CopySlices for increasing=True) and
    its backward then fails, the product's input having been overwritten; built out of place
    here, the gradient exists and vmap batches it."""
    if x.dim() != 1:
        raise RuntimeError(VANDER_RANK)
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError(VANDER_N)
    dtype = D.promote_types(x.dtype, D.int64)
    first = ones(x.shape[0], min(n, 1), dtype=dtype)
    if n > 1:
        powers = x.to(dtype).unsqueeze(1).expand(x.shape[0], n - 1).cumprod(1)
        result = cat([first, powers], 1)
    else:
        result = first
    return result if increasing else result.flip(1)


# --- tril_indices / triu_indices --------------------------------------------------------------


def _triangle_indices(name: str, row: int, col: int, offset: int, dtype) -> Tensor:
    if row < 0:
        raise RuntimeError(NEGATIVE_SIZE.format("row", row))
    if col < 0:
        raise RuntimeError(NEGATIVE_SIZE.format("col", col))
    d = D.int64 if dtype is None else dtype
    if d not in (D.int64, D.int32, D.int16, D.int8, D.uint8):
        raise not_implemented(name, d.np)
    pick = np.tril_indices if name == "tril_indices" else np.triu_indices
    rows, cols = pick(row, offset, col)
    return _wrap(np.stack([rows, cols]).astype(d.np, copy=False))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """torch.tril_indices: the (2, n) coordinates of the lower triangle of a row x col matrix,
    row by row."""
    check_layout(layout)
    return _triangle_indices("tril_indices", row, col, offset, dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """torch.triu_indices: the (2, n) coordinates of the upper triangle, row by row."""
    check_layout(layout)
    return _triangle_indices("triu_indices", row, col, offset, dtype)


register("block_diag", block_diag)
register("vander", vander)
register("tril_indices", tril_indices)
register("triu_indices", triu_indices)
