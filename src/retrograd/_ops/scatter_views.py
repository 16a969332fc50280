"""diagonal_scatter, select_scatter, slice_scatter, as_strided_scatter: self with one of its
views replaced by src, out of place (each with its own node, as in torch).

The gradient of self is the incoming gradient with that view zeroed; src's is the view of the
gradient.
"""

from __future__ import annotations

from retrograd._ops.creation import zeros_like
from retrograd._ops.kernels import scatter_views as K
from retrograd._ops.registry import op
from retrograd._ops.shape import as_strided, diagonal, select, slice_op

diagonal_scatter = op(
    "diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor",
    K.diagonal_scatter,
    grads={"self": lambda grad, src, offset, dim1, dim2:
           diagonal_scatter(grad, zeros_like(src), offset, dim1, dim2),
           "src": lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2)})

select_scatter = op(
    "select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
    K.select_scatter,
    grads={"self": lambda grad, src, dim, index:
           select_scatter(grad, zeros_like(src), dim, index),
           "src": lambda grad, dim, index: select(grad, dim, index)})

slice_scatter = op(
    "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
    "SymInt step=1) -> Tensor", K.slice_scatter,
    grads={"self": lambda grad, src, dim, start, end, step:
           slice_scatter(grad, zeros_like(src), dim, start, end, step),
           "src": lambda grad, dim, start, end, step: slice_op(grad, dim, start, end, step)})


def _strided_self_grad(grad, src, size, stride, storage_offset):
    return as_strided_scatter(grad.contiguous(), zeros_like(src), size, stride, storage_offset)


def _strided_src_grad(grad, size, stride, storage_offset):
    return as_strided(grad.contiguous(), size, stride, storage_offset or 0)


as_strided_scatter = op(
    "as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, "
    "SymInt? storage_offset=None) -> Tensor", K.as_strided_scatter,
    grads={"self": _strided_self_grad, "src": _strided_src_grad})
