"""scatter_reduce and scatter_reduce_: src reduced into self at index along dim.

The forward is one NumPy ufunc.at (add, multiply, maximum, minimum) over the addressed cells,
which first hold the reduction's identity when include_self=False; mean divides a sum by a
count (flooring for integers, as torch does). The derivatives follow torch's
scatter_reduce_backward, written with retrograd ops (scatter_reduce itself among them for prod),
so they differentiate again.
"""

from __future__ import annotations

import numpy as np

from retrograd._autograd.state import state
from retrograd._dims import wrap_dim
from retrograd._ops import comparison as C
from retrograd._ops.indexing import _pad_to, gather, scatter_add
from retrograd._ops.kernels.scatter import as_1d as _as_1d
from retrograd._ops.kernels.scatter import check_bounds as _check_bounds
from retrograd._ops.kernels.scatter import check_scatter as _check_scatter
from retrograd._ops.kernels.scatter import fresh as _fresh
from retrograd._ops.kernels.scatter import grid_key as _grid_key
from retrograd._ops.kernels.scatter import lead as _lead
from retrograd._ops.pointwise import where
from retrograd._ops.registry import op

REDUCE_ARG = "reduce argument must be either sum, prod, mean, amax or amin, got {}"
MEAN_BOOL = "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"
PROD_DOUBLE_BACKWARD = (
    "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
    "scattered to the same position in self")

_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
           "amin": np.minimum}


def _identity(reduce: str, dt: np.dtype):
    """The value a cell starts from when self is not included."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = reduce == "amin"
    if dt.kind == "b":
        return big
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.max if big else info.min
    return np.inf if big else -np.inf


def _reduce_into(a, dim, index, src, reduce, include_self):
    """Reduce src into a (in place) at index along dim."""
    if reduce not in _UFUNCS:
        raise RuntimeError(REDUCE_ARG.format(reduce))
    d = wrap_dim(dim, a.ndim)
    a1, idx, src1 = _as_1d(a, index, src)
    _check_scatter(a1, idx, src1, d, "scatter")
    if reduce == "mean" and a.dtype.kind == "b":
        raise NotImplementedError(MEAN_BOOL)
    if idx.size == 0:
        return
    if idx.max() >= a1.shape[d]:
        _check_bounds(idx, d, a1.shape[d])
    key = _grid_key(idx, d)
    vals = _lead(src1, idx.shape)
    # 16-bit floats (and float8) accumulate in float32, rounded once, as torch does
    narrow = a1.dtype.kind == "V" or a1.dtype == np.float16
    work = a1.astype(np.float32) if narrow else a1
    if not include_self:
        work[key] = _identity(reduce, work.dtype)
    with np.errstate(invalid="ignore"):  # NaN propagates through amax/amin, as in torch
        _UFUNCS[reduce].at(work, key, vals)
    if reduce == "mean":
        count = np.full(a1.shape, int(include_self), np.int64)
        np.add.at(count, key, 1)
        count[count == 0] = 1
        if narrow:  # torch rounds the sum before dividing it
            work = work.astype(a1.dtype).astype(np.float32)
        if work.dtype.kind in "iu":
            np.floor_divide(work, count.astype(work.dtype), out=work)
        else:
            np.divide(work, count.astype(work.dtype), out=work)
    if work is not a1:
        a1[...] = work


def _scatter_reduce_forward(a, dim, index, src, reduce, include_self):
    out = _fresh(a)
    _reduce_into(out, dim, index, src, reduce, include_self)
    return out


def _raise_delayed(grad):
    raise RuntimeError(PROD_DOUBLE_BACKWARD)


# identity forward whose derivative is an error (the Error node torch's DelayedError makes)
_delayed_error = op("_scatter_reduce_delayed_error(Tensor self) -> Tensor", np.copy,
                    node="Error", grads={"self": _raise_delayed},
                    function=False, method=False)


def _prod_grads(grad, self, dim, index, src, include_self, result, delayed_error):
    # cells whose own value is 0 get the product of the others: recompute it with a 1 there
    masked_self = self.masked_fill(C.eq(self, 0), 1)
    g_self = grad * scatter_reduce(masked_self, dim, index, src, "prod",
                                   include_self=include_self) / masked_self
    src_zero = C.eq(src, 0)
    zeros_at = scatter_add(self.new_zeros(self.shape), dim, index, src_zero.to(self.dtype))
    src_num_zeros = gather(zeros_at, dim, index)
    single_zero = C.logical_and(src_zero, C.eq(src_num_zeros, 1))
    # the only zero of its cell: the product of the others, again recomputed with a 1 there
    without = scatter_reduce(self, dim, index, src.masked_fill(single_zero, 1), "prod",
                             include_self=include_self)
    g_src = where(single_zero, gather(grad * without, dim, index),
                  gather(grad * result, dim, index) / src.masked_fill(src_zero, 1))
    if state.grad_enabled and g_src.requires_grad and bool(C.gt(src_num_zeros, 1).any()):
        g_src = delayed_error(g_src)
    return g_self, g_src


def _extreme_grads(grad, self, dim, index, src, result):
    """Evenly distributed among self and src values equal to the result."""
    value = gather(result, dim, index)
    self_is = C.eq(self, result).to(self.dtype)
    src_is = C.eq(src, value).to(self.dtype)
    share = grad / scatter_add(self_is, dim, index, src_is)
    return self_is * share, src_is * gather(share, dim, index)


def _scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result,
                             src_shape):
    return reduce_backward(grad, self, dim, index, src, reduce, include_self, result, src_shape,
                           _delayed_error)


def reduce_backward(grad, self, dim, index, src, reduce, include_self, result, src_shape,
                    delayed_error):
    """Both derivatives of a scatter reduction; `delayed_error` is the op whose derivative raises
    the double-backward error (index_reduce passes its own, with its message)."""
    # src may be larger than index: only its leading corner takes part
    lead = tuple(slice(0, n) for n in index.shape)
    if src.shape != index.shape:
        src = src[lead]
    if reduce == "sum":
        g_self, g_src = grad, gather(grad, dim, index)
    elif reduce == "prod":
        g_self, g_src = _prod_grads(grad, self, dim, index, src, include_self, result,
                                    delayed_error)
    elif reduce == "mean":
        count = grad.new_ones(grad.shape) if include_self else grad.new_zeros(grad.shape)
        count = scatter_add(count, dim, index, src.new_ones(src.shape))
        count = count.masked_fill(C.eq(count, 0), 1)
        g_self, g_src = grad / count, gather(grad, dim, index) / gather(count, dim, index)
    else:
        g_self, g_src = _extreme_grads(grad, self, dim, index, src, result)
    if not include_self:
        g_self = g_self.scatter(dim, index, 0)
    return g_self, _pad_to(g_src, tuple(src_shape))


_GRADS = {"self, src": _scatter_reduce_backward}

scatter_reduce = op("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, "
                    "str reduce, *, bool include_self=True) -> Tensor", _scatter_reduce_forward,
                    grads=_GRADS)
scatter_reduce_ = op("scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, "
                     "str reduce, *, bool include_self=True) -> Tensor(a!)", _reduce_into,
                     node="ScatterReduceBackward0", grads=_GRADS, function=False)
