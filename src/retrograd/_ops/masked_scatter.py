"""masked_scatter and put (with their in-place forms): a source's elements written, in order,
at the true positions of a mask / at flat positions.

Both have nodes of their own (MaskedScatterBackward0, PutBackward0).
"""

from __future__ import annotations

from retrograd._ops.creation import zeros_like
from retrograd._ops.indexing import masked_select, take
from retrograd._ops.kernels import index_writes as K
from retrograd._ops.registry import op
from retrograd._ops.shape import cat


def _masked_zero(grad, mask):
    return grad.masked_fill(mask, 0)


def _masked_source_grad(grad, mask, source_shape):
    """The gradient at the mask's positions, in order, padded with zeros for the source
    elements no position took."""
    picked = masked_select(grad, mask)
    n = 1
    for s in source_shape:
        n *= s
    missing = n - picked.shape[0]
    if missing > 0:
        picked = cat([picked, grad.new_zeros(missing)])
    return picked.view(source_shape)


_MASKED_SCATTER_GRADS = {"self": _masked_zero, "source": _masked_source_grad}

masked_scatter = op("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
                    K.masked_scatter, grads=_MASKED_SCATTER_GRADS)
masked_scatter_ = op("masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)",
                     K.masked_scatter_into, node="MaskedScatterBackward0",
                     grads=_MASKED_SCATTER_GRADS, function=False)


def _put_self_grad(grad, index, source, accumulate):
    return grad if accumulate else put(grad, index, zeros_like(source), False)


def _put_source_grad(grad, index, source_shape):
    return take(grad, index).reshape(source_shape)


_PUT_GRADS = {"self": _put_self_grad, "source": _put_source_grad}

put = op("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor",
         K.put, grads=_PUT_GRADS)
put_ = op("put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> "
          "Tensor(a!)", K.put_into, node="PutBackward0", grads=_PUT_GRADS, function=False)
