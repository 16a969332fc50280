"""rot90 and trace: ops with nodes of their own (Rot90Backward0, TraceBackward0)."""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels import rotations as K
from retrograd._ops.registry import op
from retrograd._tensor import Tensor, _wrap


def _diagonal_ones(shape: tuple, like: Tensor) -> Tensor:
    return _wrap(np.eye(shape[0], shape[1], dtype=like._data.dtype))


rot90 = op("rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor", K.rot90,
           grads={"self": lambda grad, k, dims: rot90(grad, -k, dims)})

# the gradient spreads the scalar over the diagonal: grad times an identity pattern
trace = op("trace(Tensor self) -> Tensor", K.trace,
           grads={"self": lambda grad, self_shape: grad * _diagonal_ones(self_shape, grad)})
