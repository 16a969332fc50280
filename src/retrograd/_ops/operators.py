"""Python operators on Tensor, mapped to ops (after all op modules are loaded)."""

from __future__ import annotations

from retrograd._ops import copy, linalg, pointwise, shape  # noqa: F401
from retrograd._tensor import Tensor


def install() -> None:
    P = pointwise
    T = Tensor
    T.__add__ = T.__radd__ = P.add
    T.__sub__ = P.sub
    T.__rsub__ = P.rsub
    T.__mul__ = T.__rmul__ = P.mul
    T.__truediv__ = P.div
    T.__neg__ = P.neg
    T.__rtruediv__ = lambda self, other: P.div(_scalar_tensor(other, self), self)


def _scalar_tensor(value, like: Tensor) -> Tensor:
    from retrograd._ops.creation import tensor

    if isinstance(value, Tensor):
        return value
    return tensor(value, dtype=None).to(like.dtype) if like.is_floating_point() else tensor(value)
