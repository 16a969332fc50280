"""Diagonal matrices: diag_embed, diagonal_copy, and torch's composites diag and diagflat.

diag of a vector is diag_embed into the first two dims, diag of a matrix is diagonal_copy (a
fresh tensor, not diagonal's view), and diagflat is diag_embed of the flattened input: the same
decomposition as torch, so the node names are torch's (DiagEmbedBackward0,
DiagonalBackward0_copy). diag_embed and diagonal_copy are each other's derivatives through the
diagonal view ops, so double backward needs nothing more.

The NumPy kernels the declarations run are in kernels/diagonals.py.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops import reduction_helpers as H
from retrograd._ops.kernels.diagonals import (
    _diag_embed_forward,
)
from retrograd._ops.kernels.shape import _diagonal_forward
from retrograd._ops.out_variant import check_no_grad, run_with_out
from retrograd._ops.registry import op, register
from retrograd._ops.shape import diagonal, diagonal_backward
from retrograd._tensor import Tensor

DIAG_RANK = "diag(): Supports 1D or 2D tensors. Got {}D"


diag_embed = op("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
                _diag_embed_forward,
                grads={"self": lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1,
                                                                          dim2)})


def _diagonal_copy_forward(a, offset, dim1, dim2):
    return H.c_layout(np.array(_diagonal_forward(a, offset, dim1, dim2)))


diagonal_copy = op("diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
                   _diagonal_copy_forward, node="DiagonalBackward0_copy",
                   grads={"self": lambda grad, self_shape, offset, dim1, dim2:
                          diagonal_backward(grad, self_shape, offset, dim1, dim2)},
                   method=False)


def _diag_args(input: Tensor, diagonal: int) -> tuple:
    nd = input.dim()
    if nd == 1:
        return diag_embed, (input, diagonal, 0, 1)
    if nd == 2:
        return diagonal_copy, (input, diagonal, 0, 1)
    raise RuntimeError(DIAG_RANK.format(nd))


def diag(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """A vector's diagonal matrix, or a matrix's diagonal (a copy), `diagonal` above the main
    one (below if negative)."""
    fn, args = _diag_args(input, diagonal)
    if out is not None:
        return _named_out("diag", fn, args, out)
    return fn(*args)


def _named_out(name: str, fn, args: tuple, out) -> Tensor:
    """run_with_out for a composite, its autograd error naming the function the user called."""
    check_no_grad(name, args, (out,) if isinstance(out, Tensor) else ())
    return run_with_out(fn.opdef, args, out)


register("diag", diag, method=True)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened input as the diagonal of a matrix."""
    return diag_embed(input.reshape(-1), offset, 0, 1)


register("diagflat", diagflat, method=True)
