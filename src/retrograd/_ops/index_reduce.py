"""index_reduce and index_reduce_: slices of source reduced into self at a vector of indices.

`self.index_reduce(dim, index, source, reduce)` is scatter_reduce with the index vector spread
over every position of source's other dims, so the forward and the derivatives are
scatter_reduce's (retrograd._ops.scatter_reduce) on that spread index; only the checks and their
messages are index_reduce's own.
"""

from __future__ import annotations

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._dims import wrap_dim
from retrograd._ops import scatter_reduce as S
from retrograd._ops.reduction import _scalar_name
from retrograd._ops.registry import op

REDUCE_ARG = "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {}."
NOT_VECTOR = ("index_reduce_(): Index is supposed to be a vector, but got dim: {} with type: {} "
              "and size: {}")
COUNT = ("index_reduce_(): Number of indices ({}) should be equal to source.size(dim): ({}), for "
         "dim: {}")
INDEX_DTYPE = "index_reduce_(): Expected dtype int32/int64 for index but got: {}"
OUT_OF_RANGE = "index out of range in self"
SLICE_SHAPE = ("source tensor shape must match self tensor shape, excluding the specified "
               "dimension. Got self.shape = {} source.shape = {}")
SCALAR_TYPE = "index_reduce_(): self ({}) and source ({}) must have the same scalar type"
BETA = "index_reduce() is in beta and the API may change at any time."
PROD_DOUBLE_BACKWARD = (
    "index_reduce(): Double backward is unsupported for source when >1 zeros in source are "
    "scattered to the same position in self")
_REDUCES = ("prod", "mean", "amax", "amin")
_warned = False


def _spread(index, shape: tuple, dim: int):
    """The 1-d index placed along `dim` and broadcast to `shape` (works on arrays and Tensors)."""
    view = [1] * len(shape)
    if shape:
        view[dim] = -1
    return index.reshape(view).expand(shape) if hasattr(index, "expand") else \
        np.broadcast_to(index.reshape(view), shape)


def _check(a, dim: int, index, source, reduce: str) -> int:
    global _warned
    if reduce not in _REDUCES:
        raise RuntimeError(REDUCE_ARG.format(reduce))
    if not _warned:
        _warned = True
        _ws.warn(BETA, UserWarning, stacklevel=4)
    d = wrap_dim(dim, a.ndim)
    if index.ndim > 1:
        raise IndexError(NOT_VECTOR.format(index.ndim, _scalar_name(index.dtype),
                                           list(index.shape)))
    if index.dtype.kind not in "iu":
        raise RuntimeError(INDEX_DTYPE.format(_scalar_name(index.dtype)))
    if a.dtype != source.dtype:
        raise RuntimeError(SCALAR_TYPE.format(_scalar_name(a.dtype), _scalar_name(source.dtype)))
    if a.ndim and (source.ndim != a.ndim or any(
            n != m for i, (n, m) in enumerate(zip(a.shape, source.shape)) if i != d)):
        raise RuntimeError(SLICE_SHAPE.format(list(a.shape), list(source.shape)))
    src_n = source.shape[d] if source.ndim else 1
    if index.size != src_n:
        raise RuntimeError(COUNT.format(index.size, src_n, d))
    size = a.shape[d] if a.ndim else 1
    if index.size and (index.max() >= size or index.min() < 0):  # no negative indices
        raise IndexError(OUT_OF_RANGE)
    return d


def _index_reduce_into(a, dim, index, source, reduce, include_self):
    d = _check(a, dim, index, source, reduce)
    idx = index.astype(np.int64, copy=False)
    S._reduce_into(a, d, _spread(idx, source.shape, d), source, reduce, include_self)


def _index_reduce_forward(a, dim, index, source, reduce, include_self):
    out = S._fresh(a)
    _index_reduce_into(out, dim, index, source, reduce, include_self)
    return out


def _raise_delayed(grad):
    raise RuntimeError(PROD_DOUBLE_BACKWARD)


# identity forward whose derivative is an error (the Error node torch's DelayedError makes)
_delayed_error = op("_index_reduce_delayed_error(Tensor self) -> Tensor", np.copy,
                    node="Error", grads={"self": _raise_delayed},
                    function=False, method=False)


def _index_reduce_backward(grad, self, dim, index, source, reduce, include_self, result,
                           source_shape):
    d = wrap_dim(dim, self.ndim)
    spread = _spread(index, tuple(source.shape), d)
    return S.reduce_backward(grad, self, d, spread, source, reduce, include_self, result,
                             source_shape, _delayed_error)


_GRADS = {"self, source": _index_reduce_backward}

index_reduce = op("index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, "
                  "*, bool include_self=True) -> Tensor", _index_reduce_forward, grads=_GRADS)
index_reduce_ = op("index_reduce_(Tensor(a!) self, int dim, Tensor index, Tensor source, "
                   "str reduce, *, bool include_self=True) -> Tensor(a!)", _index_reduce_into,
                   node="IndexReduceBackward0", grads=_GRADS, function=False)
