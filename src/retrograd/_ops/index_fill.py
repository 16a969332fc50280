"""index_fill and index_copy (with their in-place forms): whole slices along a dim, picked by
an index vector, set to one value or copied from a source.

Both have nodes of their own (IndexFillBackward0/1, IndexCopyBackward0). The gradient of self
is the incoming gradient with the written slices zeroed; the value's is the gradient summed
over the written slices, the source's the gradient at them.
"""

from __future__ import annotations

from retrograd._ops.creation import zeros_like
from retrograd._ops.indexing import index_select
from retrograd._ops.kernels import index_writes as K
from retrograd._ops.overloads import overloaded
from retrograd._ops.registry import op


def _zero_written(grad, dim, index):
    return _fill_scalar(grad, dim, index, 0)


def _value_grad(grad, dim, index):
    # the gradient at the filled slices, each counted once however often the index names it
    written = _fill_scalar(zeros_like(grad), dim, index, 1)
    return (grad * written).sum()


def _source_grad(grad, dim, index, source_shape):
    if grad.dim() == 0:  # a 0-d self has one element, which the one valid index names
        return grad.reshape(source_shape)
    g = index_select(grad, dim, index)
    return g if tuple(g.shape) == tuple(source_shape) else g.reshape(source_shape)


_FILL_SCALAR_GRADS = {"self": _zero_written}
_FILL_TENSOR_GRADS = {"self": _zero_written, "value": _value_grad}
_COPY_GRADS = {"self": _zero_written, "source": _source_grad}

_fill_scalar = op("index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> "
                  "Tensor", K.index_fill, grads=_FILL_SCALAR_GRADS)
op("index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
   K.index_fill, grads=_FILL_TENSOR_GRADS)
op("index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
   K.index_fill_into, node="IndexFillBackward0", grads=_FILL_SCALAR_GRADS, function=False)
op("index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> Tensor(a!)",
   K.index_fill_into, node="IndexFillBackward1", grads=_FILL_TENSOR_GRADS, function=False)
index_fill = overloaded("index_fill")

index_copy = op("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor",
                K.index_copy, grads=_COPY_GRADS)
index_copy_ = op("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> "
                 "Tensor(a!)", K.index_copy_into, node="IndexCopyBackward0", grads=_COPY_GRADS,
                 function=False)
