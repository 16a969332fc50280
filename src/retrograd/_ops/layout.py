"""Output memory layout of pointwise ops, chosen as torch's TensorIterator chooses it.

NumPy gives a row-major result when its inputs disagree on layout; torch orders the output's
dimensions by the strides of the inputs, first input first. Only needed when some input is not
row-major contiguous, so the common case costs one flag test per input.
"""

from __future__ import annotations

import numpy as np


def _should_swap(dim0: int, dim1: int, shape: tuple, strides: list) -> int:
    for st in strides:
        s0, s1 = st[dim0], st[dim1]
        if s0 == 0 or s1 == 0:
            continue
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        if shape[dim0] > shape[dim1]:
            return 1
    return 0


def torch_order(shape: tuple, arrays: list) -> list:
    """Dims from fastest- to slowest-varying, as TensorIterator's reorder_dimensions gives."""
    nd = len(shape)
    strides = []
    for a in arrays:
        lead = nd - a.ndim
        st = [0] * lead + [0 if a.shape[i] == 1 else a.strides[i] for i in range(a.ndim)]
        strides.append(st)
    perm = list(range(nd - 1, -1, -1))
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = _should_swap(perm[d0], perm[d1], shape, strides)
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def empty_for(shape: tuple, dtype, arrays: list) -> np.ndarray:
    """An uninitialized output of `shape` laid out the way torch lays out a pointwise result."""
    perm = torch_order(shape, arrays)
    slow_to_fast = perm[::-1]
    buf = np.empty([shape[d] for d in slow_to_fast], dtype)
    return buf.transpose(np.argsort(slow_to_fast))


def binary(ufunc):
    """A forward for a binary ufunc that lays its output out like torch."""

    def forward(a, b):
        if (type(a) is not np.ndarray or a.flags.c_contiguous) and (
                type(b) is not np.ndarray or b.flags.c_contiguous):
            return ufunc(a, b)
        arrays = [x for x in (a, b) if type(x) is np.ndarray]
        shape = np.broadcast_shapes(*(x.shape for x in arrays))
        if len(shape) < 2:
            return ufunc(a, b)
        out = empty_for(shape, np.result_type(a, b), arrays)
        return ufunc(a, b, out=out)

    forward.__name__ = ufunc.__name__
    return forward
