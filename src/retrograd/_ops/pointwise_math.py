"""Element-wise math functions beyond the basic ones: erfc, erfinv, logaddexp(2), xlogy,
copysign, nan_to_num, float_power, fmax / fmin, heaviside, ldexp, frexp, nextafter, gcd and
lcm (kernels in kernels/pointwise_math.py; i0 is declared with its family in
special_math.py).

Binary ops that torch declares with two Tensor arguments and no Scalar overload refuse a
Python number with torch's TypeError (tensor_operands.tensors_only); those with Scalar
overloads (xlogy, copysign, float_power) are declared overload by overload, numbered as torch
numbers their nodes. Formulas follow torch's, so values at the edges (0 * log 0, the sign of
zero, NaN operands) agree.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd import _dtype as D
from retrograd._ops import comparison as C
from retrograd._ops.creation import zeros_like
from retrograd._ops.kernels import pointwise_math as K
from retrograd._ops.layout import inplace_forward, inplace_of, pointwise, promoting
from retrograd._ops.overloads import RETURN_TYPES, composite, overloaded
from retrograd._ops.pointwise import (
    _no_derivative,
    _not_implemented_node,
    exp,
    exp2,
    pow_s,
    pow_ts,
    pow_tt,
    where,
)
from retrograd._ops.reduction import _return_type, return_types
from retrograd._ops.registry import op
from retrograd._ops.tensor_operands import tensors_only
from retrograd._tensor import Tensor

FREXP_FLOAT = "torch.frexp() only supports floating-point dtypes"
FLOAT_POWER_INPLACE = ("the base given to float_power_ has dtype {} but the operation's result "
                       "requires dtype Double")
LN2 = math.log(2.0)


# --- erfc, erfinv --------------------------------------------------------------------------------

erfc = op("erfc(Tensor self) -> Tensor", pointwise(K.erfc_array), promote="float",
          grads={"self": lambda grad, self:
                 (-2.0 / math.sqrt(math.pi)) * exp(-(self * self)) * grad})


def _erfinv_grad(grad, self):
    root = erfinv(self)
    return (0.5 * math.sqrt(math.pi)) * exp(root * root) * grad


erfinv = op("erfinv(Tensor self) -> Tensor", pointwise(K.erfinv_array), promote="float",
            grads={"self": _erfinv_grad})


# --- logaddexp, logaddexp2 -----------------------------------------------------------------------

logaddexp = op("logaddexp(Tensor self, Tensor other) -> Tensor",
               tensors_only("logaddexp", np.logaddexp, floats_only=True),
               grads={"self": lambda grad, self, other: grad / (1 + exp(other - self)),
                      "other": lambda grad, self, other: grad / (1 + exp(self - other))})
logaddexp2 = op("logaddexp2(Tensor self, Tensor other) -> Tensor",
                tensors_only("logaddexp2", np.logaddexp2, floats_only=True),
                grads={"self": lambda grad, self, other: grad / (1 + pow_s(2, other - self)),
                       "other": lambda grad, self, other: grad / (1 + pow_s(2, self - other))})


# --- xlogy ---------------------------------------------------------------------------------------


def _xlogy_self_grad(grad, self, other):
    """log(other) * grad, but 0 where self is 0 and other <= 0 (the subgradient torch picks)."""
    g = xlogy(grad, other)
    if isinstance(other, Tensor):
        return where(C.logical_and(C.eq(self, 0.0), C.le(other, 0.0)), 0.0, g)
    return where(C.eq(self, 0.0), 0.0, g) if other <= 0 else g


_xlogy_kernel = pointwise(promoting(K.xlogy_array, (0, 1), to_float=True))
xlogy_t = op("xlogy.Tensor(Tensor self, Tensor other) -> Tensor", _xlogy_kernel,
             grads={"self": _xlogy_self_grad,
                    "other": lambda grad, self, other: grad * self / other})
xlogy_ss = op("xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor", _xlogy_kernel,
              grads={"other": lambda grad, self, other: grad * self / other})
xlogy_so = op("xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor", _xlogy_kernel,
              grads={"self": _xlogy_self_grad})
xlogy = overloaded("xlogy")


# --- copysign ------------------------------------------------------------------------------------


def _copysign_self_grad(grad, self, result):
    """+-grad: result / self is the sign flip, taken as 0 where self is 0."""
    return grad * where(C.eq(self, 0.0), 0.0, result / self)


_copysign_kernel = pointwise(promoting(np.copysign, (0, 1), to_float=True))
copysign_t = op("copysign.Tensor(Tensor self, Tensor other) -> Tensor", _copysign_kernel,
                grads={"self": _copysign_self_grad,
                       "other": lambda grad, other: zeros_like(other)})
copysign_s = op("copysign.Scalar(Tensor self, Scalar other) -> Tensor", _copysign_kernel,
                grads={"self": _copysign_self_grad})
copysign = overloaded("copysign")


# --- nan_to_num ----------------------------------------------------------------------------------

nan_to_num = op("nan_to_num(Tensor self, float? nan=None, float? posinf=None, "
                "float? neginf=None) -> Tensor", pointwise(K.nan_to_num_array),
                grads={"self": lambda grad, self: grad * C.isfinite(self)})


# --- fmax, fmin ----------------------------------------------------------------------------------


def _fmax_taken(self, other):
    """Where fmax takes self: self >= other, or other is NaN."""
    return C.logical_or(C.ge(self, other), C.isnan(other))


def _fmin_taken(self, other):
    return C.logical_or(C.le(self, other), C.isnan(other))


fmax = op("fmax(Tensor self, Tensor other) -> Tensor", tensors_only("fmax", np.fmax),
          grads={"self": lambda grad, self, other: where(_fmax_taken(self, other), grad, 0.0),
                 "other": lambda grad, self, other: where(_fmax_taken(self, other), 0.0, grad)})
fmin = op("fmin(Tensor self, Tensor other) -> Tensor", tensors_only("fmin", np.fmin),
          grads={"self": lambda grad, self, other: where(_fmin_taken(self, other), grad, 0.0),
                 "other": lambda grad, self, other: where(_fmin_taken(self, other), 0.0, grad)})


# --- heaviside, nextafter (no derivative worth the name) -----------------------------------------

heaviside = _not_implemented_node(op(
    "heaviside(Tensor self, Tensor values) -> Tensor",
    tensors_only("heaviside", K.heaviside_array, names=("input", "values"), same_dtype=True),
    grads={"self, values": _no_derivative("heaviside")}))
heaviside_ = _not_implemented_node(op(
    "heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)",
    inplace_forward(heaviside.opdef.forward, positions=(0, 1)),
    grads={"self, values": _no_derivative("heaviside_")}, function=False))

# torch passes the gradient through to self (nextafter moves by one ulp) and gives other zeros
nextafter = op("nextafter(Tensor self, Tensor other) -> Tensor",
               tensors_only("nextafter", np.nextafter, floats_only=True),
               grads={"self": lambda grad: grad,
                      "other": lambda grad, other: zeros_like(other)})


# --- ldexp, frexp --------------------------------------------------------------------------------

ldexp = op("ldexp.Tensor(Tensor self, Tensor other) -> Tensor",
           tensors_only("ldexp", K.ldexp_array, to_float=True),
           grads={"self": lambda grad, other: grad * exp2(other),
                  "other": lambda grad, self, other: grad * self * exp2(other) * LN2})


def _frexp(a: np.ndarray):
    if a.dtype.kind not in "fV":
        raise RuntimeError(FREXP_FLOAT)
    return K.frexp_arrays(a)


return_types.frexp = _return_type("frexp", ("mantissa", "exponent"))
return_types.frexp_out = _return_type("frexp_out", ("mantissa", "exponent"))
RETURN_TYPES.update(frexp=return_types.frexp, frexp_out=return_types.frexp_out)
_frexp_op = op("frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)", _frexp,
               grads={"self": lambda grad, exponent: grad / exp2(exponent)},
               differentiable_outputs=(True, False))


# --- gcd, lcm (integers only: no gradient) -------------------------------------------------------

gcd = op("gcd(Tensor self, Tensor other) -> Tensor",
         tensors_only("gcd", np.gcd, ints_only=True))
lcm = op("lcm(Tensor self, Tensor other) -> Tensor",
         tensors_only("lcm", np.lcm, ints_only=True))


# --- float_power (composite: pow in float64) -----------------------------------------------------


def _as_double(x):
    if isinstance(x, Tensor):
        return x if x.dtype == D.float64 else x.to(D.float64)
    return float(x)


def _float_power_tt(self: Tensor, exponent: Tensor) -> Tensor:
    return pow_tt(_as_double(self), _as_double(exponent))


def _float_power_ts(self: Tensor, exponent) -> Tensor:
    return pow_ts(_as_double(self), _as_double(exponent))


def _float_power_st(self, exponent: Tensor) -> Tensor:
    return pow_s(_as_double(self), _as_double(exponent))


composite("float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", _float_power_tt)
composite("float_power.Scalar(Scalar self, Tensor exponent) -> Tensor", _float_power_st,
          method=False)
composite("float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", _float_power_ts)
float_power = overloaded("float_power")


def _float_power_inplace(self: Tensor, exponent) -> Tensor:
    if self.dtype != D.float64:
        raise RuntimeError(FLOAT_POWER_INPLACE.format(D.legacy_name(self.dtype)))
    return self.pow_(_as_double(exponent))


composite("float_power_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
          _float_power_inplace, function=False)
composite("float_power_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
          _float_power_inplace, function=False)


# --- in-place forms and aliases ------------------------------------------------------------------

erfc_ = inplace_of(erfc, function=True)
erfinv_ = inplace_of(erfinv)
xlogy_t_ = inplace_of(xlogy_t, name="xlogy_", function=True)
xlogy_so_ = inplace_of(xlogy_so, name="xlogy_", function=True)
copysign_t_ = inplace_of(copysign_t, name="copysign_")
copysign_s_ = inplace_of(copysign_s, name="copysign_")
nan_to_num_ = inplace_of(nan_to_num, function=True)
nextafter_ = inplace_of(nextafter)
ldexp_ = inplace_of(ldexp, name="ldexp_", function=True)
gcd_ = inplace_of(gcd, function=True)
lcm_ = inplace_of(lcm, function=True)
