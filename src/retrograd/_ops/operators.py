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
    T.__truediv__ = T.__div__ = P.div  # __div__: Python 2's name, which torch's still has
    T.__neg__ = P.neg
