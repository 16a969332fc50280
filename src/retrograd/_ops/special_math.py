"""The special functions torch declares as ops of their own: the modified Bessel functions i0,
special_i0e, special_i1, special_i1e, and special_erfcx, special_ndtri, special_log_ndtr,
special_entr, special_xlog1py (kernels in kernels/pointwise_math.py).

retrograd.special exposes them under torch.special's names. Each derivative is written with the
family's other members, as torch's formulas are, so it differentiates again; at x = 0, where
i1(x) / x has no value, i1's and i1e's derivative is its limit 1/2.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._ops import comparison as C
from retrograd._ops.kernels import pointwise_math as K
from retrograd._ops.layout import inplace_of, pointwise, promoting
from retrograd._ops.overloads import overloaded
from retrograd._ops.pointwise import exp, log, sgn, where
from retrograd._ops.registry import op
from retrograd._tensor import Tensor

SQRT_2PI = math.sqrt(2.0 * math.pi)


# --- modified Bessel functions of the first kind ------------------------------------------------


def _tiny(self: Tensor) -> Tensor:
    """|x| within the dtype's epsilon of 0 (where the formulas divide by x)."""
    return self.abs().le(float(np.finfo(self._data.dtype).eps)
                         if self._data.dtype.kind == "f" else 0.0)


def _i1_grad(grad, self, result):
    """I1'(x) = I0(x) - I1(x) / x, and 1/2 at x = 0."""
    tiny = _tiny(self)
    safe = where(tiny, 1.0, self)
    return grad * where(tiny, 0.5, i0(safe) - result / safe)


def _i1e_grad(grad, self, result):
    """(e^-|x| I1)'(x) = i0e(x) - i1e(x) (sgn(x) + 1 / x), and 1/2 at x = 0."""
    tiny = _tiny(self)
    safe = where(tiny, 1.0, self)
    return grad * where(tiny, 0.5, special_i0e(safe) - result * (sgn(safe) + 1.0 / safe))


i0 = op("i0(Tensor self) -> Tensor", pointwise(K.i0_array), promote="float",
        grads={"self": lambda grad, self: grad * special_i1(self)})
special_i0e = op("special_i0e(Tensor self) -> Tensor", pointwise(K.i0e_array),
                 promote="float", method=False,
                 grads={"self": lambda grad, self, result:
                        grad * (special_i1e(self) - sgn(self) * result)})
special_i1 = op("special_i1(Tensor self) -> Tensor", pointwise(K.i1_array), promote="float",
                method=False, grads={"self": _i1_grad})
special_i1e = op("special_i1e(Tensor self) -> Tensor", pointwise(K.i1e_array),
                 promote="float", method=False, grads={"self": _i1e_grad})
i0_ = inplace_of(i0, function=True)


# --- error function relatives --------------------------------------------------------------------

special_erfcx = op("special_erfcx(Tensor self) -> Tensor", pointwise(K.erfcx_array),
                   promote="float", method=False,
                   grads={"self": lambda grad, self, result:
                          (2.0 * self * result - 2.0 / math.sqrt(math.pi)) * grad})
special_ndtri = op("special_ndtri(Tensor self) -> Tensor", pointwise(K.ndtri_array),
                   promote="float", method=False,
                   grads={"self": lambda grad, result:
                          grad * SQRT_2PI * exp(result * result / 2)})
special_log_ndtr = op("special_log_ndtr(Tensor self) -> Tensor", pointwise(K.log_ndtr_array),
                      promote="float", method=False,
                      grads={"self": lambda grad, self, result:
                             grad / SQRT_2PI * exp(-(result + self * self / 2))})


# --- entropy terms -------------------------------------------------------------------------------

special_entr = op("special_entr(Tensor self) -> Tensor", pointwise(K.entr_array),
                  promote="float", method=False,
                  grads={"self": lambda grad, self: grad * -(1 + log(self))})


def _xlog1py_self_grad(grad, self, other):
    """log1p(other) * grad, but 0 where self is 0 and other <= -1 (torch's choice)."""
    g = special_xlog1py(grad, other)
    if isinstance(other, Tensor):
        return where(C.logical_and(C.eq(self, 0.0), C.le(other, -1.0)), 0.0, g)
    return where(C.eq(self, 0.0), 0.0, g) if other <= -1 else g


_xlog1py_kernel = pointwise(promoting(K.xlog1py_array, (0, 1), to_float=True))
_xlog1py_other = {"other": lambda grad, self, other: grad * self / (other + 1)}
special_xlog1py_t = op("special_xlog1py(Tensor self, Tensor other) -> Tensor",
                       _xlog1py_kernel, method=False,
                       grads={"self": _xlog1py_self_grad, **_xlog1py_other})
special_xlog1py_ss = op("special_xlog1py.self_scalar(Scalar self, Tensor other) -> Tensor",
                        _xlog1py_kernel, method=False, grads=_xlog1py_other)
special_xlog1py_so = op("special_xlog1py.other_scalar(Tensor self, Scalar other) -> Tensor",
                        _xlog1py_kernel, method=False, grads={"self": _xlog1py_self_grad})
special_xlog1py = overloaded("special_xlog1py")
