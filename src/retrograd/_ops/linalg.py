"""Linear algebra: mm, matmul and friends."""

from __future__ import annotations

import numpy as np

from retrograd import _errors as E
from retrograd._ops.registry import op


def _mm_forward(a, b):
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(E.MATMUL_SHAPES.format(*a.shape, *b.shape))
    return np.matmul(a, b)


mm = op("mm(Tensor self, Tensor mat2) -> Tensor", _mm_forward, promote="all",
        grads={"self": lambda grad, mat2: grad.mm(mat2.t()),
               "mat2": lambda grad, self: self.t().mm(grad)})
