"""Reductions: sum, mean, ... with dim/keepdim."""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.registry import op, register


def _dims(dim, ndim: int):
    """Normalize an int / list of ints / None to a tuple of non-negative dims (None: all)."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    n = ndim if ndim > 0 else 1
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        out.append(d % n)
    return tuple(out) if ndim > 0 else ()


def _acc_dtype(a, dtype):
    if dtype is not None:
        return dtype.np
    if a.dtype.kind in "biu":
        return np.int64
    return a.dtype


def _sum_forward(a, dim, keepdim, dtype):
    axes = _dims(dim, a.ndim)
    if axes == ():
        axes = None if dim is None else ()
    return np.sum(a, axis=axes, keepdims=keepdim, dtype=_acc_dtype(a, dtype))


def expand_reduced(grad, shape: tuple, dim, keepdim: bool):
    """Broadcast a reduction's gradient back over the reduced dims."""
    if not keepdim and dim is not None and len(shape) > 0:
        for d in sorted(_dims(dim, len(shape))):
            grad = grad.unsqueeze(d)
    return grad.expand(shape)


_sum_all = op("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
              lambda a, dtype: _sum_forward(a, None, False, dtype),
              grads={"self": lambda grad, self_shape: grad.expand(self_shape)},
              function=False, method=False)

_sum_dim = op("sum.dim_IntList(Tensor self, int[]? dim, bool keepdim=False, *, "
              "ScalarType? dtype=None) -> Tensor", _sum_forward, node="SumBackward1",
              grads={"self": lambda grad, self_shape, dim, keepdim:
                     expand_reduced(grad, self_shape, dim, keepdim)},
              function=False, method=False)


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001 - torch's name
    if dim is None and not keepdim:
        return _sum_all(input, dtype=dtype)
    return _sum_dim(input, dim, keepdim, dtype=dtype)


register("sum", sum, method=True)


def _mean_forward(a, dim, keepdim, dtype):
    if a.dtype.kind in "biu" and dtype is None:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {D.from_numpy_dtype(a.dtype)._legacy.replace('Tensor', '')}")
    axes = _dims(dim, a.ndim)
    if axes == () and dim is not None:
        return np.asarray(a, dtype=_acc_dtype(a, dtype)).copy()
    return np.mean(a, axis=axes, keepdims=keepdim, dtype=_acc_dtype(a, dtype))


def _numel_over(shape: tuple, dim) -> int:
    if dim is None:
        n = 1
        for s in shape:
            n *= s
        return n
    n = 1
    for d in _dims(dim, len(shape)):
        n *= shape[d] if shape else 1
    return n


_mean_all = op("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
               lambda a, dtype: _mean_forward(a, None, False, dtype),
               grads={"self": lambda grad, self_shape:
                      grad.expand(self_shape) / max(_numel_over(self_shape, None), 1)},
               function=False, method=False)

_mean_dim = op("mean.dim(Tensor self, int[]? dim, bool keepdim=False, *, "
               "ScalarType? dtype=None) -> Tensor", _mean_forward, node="MeanBackward1",
               grads={"self": lambda grad, self_shape, dim, keepdim:
                      expand_reduced(grad, self_shape, dim, keepdim)
                      / _numel_over(self_shape, dim)},
               function=False, method=False)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dim is None and not keepdim:
        return _mean_all(input, dtype=dtype)
    return _mean_dim(input, dim, keepdim, dtype=dtype)


register("mean", mean, method=True)
