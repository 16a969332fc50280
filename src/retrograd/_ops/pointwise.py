"""Pointwise arithmetic: add, sub, mul, div and the unary math functions.

Binary ops broadcast and accept Python scalars; `promote="all"` casts inputs to torch's result
dtype first, `promote="float"` additionally sends integer inputs to the default float dtype.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.layout import binary
from retrograd._ops.registry import op

_np_add, _np_sub, _np_mul, _np_div = (binary(np.add), binary(np.subtract), binary(np.multiply),
                                      binary(np.true_divide))


def _add(a, b, alpha):
    return _np_add(a, b) if alpha == 1 else _np_add(a, np.multiply(b, alpha))


def _sub(a, b, alpha):
    return _np_sub(a, b) if alpha == 1 else _np_sub(a, np.multiply(b, alpha))


add = op("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _add,
         promote="all",
         grads={"self": lambda grad: grad,
                "other": lambda grad, alpha: grad if alpha == 1 else grad * alpha})

sub = op("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _sub,
         promote="all",
         grads={"self": lambda grad: grad,
                "other": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha})

rsub = op("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
          lambda a, b, alpha: _sub(b, a, alpha), promote="all", node="RsubBackward1",
          grads={"self": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
                 "other": lambda grad: grad}, method=False)

mul = op("mul.Tensor(Tensor self, Tensor other) -> Tensor", _np_mul, promote="all",
         grads={"self": lambda grad, other: grad * other,
                "other": lambda grad, self: grad * self})

div = op("div.Tensor(Tensor self, Tensor other) -> Tensor", _np_div, promote="float",
         grads={"self": lambda grad, other: grad / other,
                "other": lambda grad, self, other: -grad * self / (other * other)})

neg = op("neg(Tensor self) -> Tensor", np.negative, grads={"self": lambda grad: -grad})

exp = op("exp(Tensor self) -> Tensor", np.exp, promote="float",
         grads={"self": lambda grad, result: grad * result})

log = op("log(Tensor self) -> Tensor", np.log, promote="float",
         grads={"self": lambda grad, self: grad / self})

tanh = op("tanh(Tensor self) -> Tensor", np.tanh, promote="float",
          grads={"self": lambda grad, result: grad * (1 - result * result)})
