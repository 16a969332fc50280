"""Activations torch builds from other ops, so their nodes are the last op's: softsign
(x / (1 + |x|), DivBackward0) and softmin (softmax of -x, SoftmaxBackward0)."""

from __future__ import annotations

from retrograd import _dtype as D
from retrograd._ops import pointwise as P
from retrograd._ops.reduction import _implicit_dim, softmax
from retrograd._ops.registry import register_functional
from retrograd._tensor import Tensor


def softsign(input: Tensor) -> Tensor:
    return input / (P.abs(input) + 1)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: D.dtype | None = None) -> Tensor:
    if dim is None:
        dim = _implicit_dim("softmin", input.dim(), _stacklevel)
    return softmax(-input, dim, dtype)


register_functional("softsign", softsign)
register_functional("softmin", softmin)
