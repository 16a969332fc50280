"""Trigonometric and hyperbolic functions, their inverses, atan2, hypot, sinc and the angle
conversions deg2rad / rad2deg.

Integer and bool inputs compute in the default float dtype (promote="float"), as in torch.
Each formula follows the shape of torch's, so that values at the domain edges agree too (asin'
at 1 is inf, not NaN, because it is written as grad * rsqrt(1 - x^2)). Every op also has its
in-place form, and torch's numpy-style alias (arcsin, arctan2, ...) for both.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from retrograd._ops import comparison as C
from retrograd._ops.kernels.pointwise import _direct_unary
from retrograd._ops.kernels.pointwise_math import (
    deg2rad_array,
    rad2deg_array,
    sinc_array,
)
from retrograd._ops.layout import inplace_forward, inplace_of
from retrograd._ops.pointwise import cos, pow_ts, rsqrt, sin, where
from retrograd._ops.registry import op, register, register_method
from retrograd._ops.tensor_operands import tensors_only
from retrograd._ops.unique import _no_derivative

DEG_PER_RAD = 180.0 / math.pi
RAD_PER_DEG = math.pi / 180.0


# --- hyperbolic ----------------------------------------------------------------------------------

sinh = op("sinh(Tensor self) -> Tensor", np.sinh, promote="float",
          grads={"self": lambda grad, self: grad * cosh(self)})
cosh = op("cosh(Tensor self) -> Tensor", np.cosh, promote="float",
          grads={"self": lambda grad, self: grad * sinh(self)})
asinh = op("asinh(Tensor self) -> Tensor", np.arcsinh, promote="float",
           grads={"self": lambda grad, self: grad * rsqrt(pow_ts(self, 2) + 1)})
acosh = op("acosh(Tensor self) -> Tensor", np.arccosh, promote="float",
           grads={"self": lambda grad, self: grad * rsqrt(pow_ts(self, 2) - 1)})
atanh = op("atanh(Tensor self) -> Tensor", np.arctanh, promote="float",
           grads={"self": lambda grad, self: grad / (1 - pow_ts(self, 2))})


# --- inverse trigonometric -----------------------------------------------------------------------

asin = op("asin(Tensor self) -> Tensor", np.arcsin, promote="float",
          grads={"self": lambda grad, self: grad * rsqrt(-self * self + 1)})
acos = op("acos(Tensor self) -> Tensor", np.arccos, promote="float",
          grads={"self": lambda grad, self: grad * -rsqrt(-self * self + 1)})
atan = op("atan(Tensor self) -> Tensor", np.arctan, promote="float",
          grads={"self": lambda grad, self: grad / (self * self + 1)})


def _atan2_grads(grad, self, other, output_mask):
    # both gradients share 1 / (y^2 + x^2), taken as 0 at the origin (as torch does)
    norm2 = self * self + other * other
    scale = where(C.eq(norm2, 0.0), 0.0, norm2.reciprocal())
    return (grad * other * scale if output_mask[0] else None,
            grad * -self * scale if output_mask[1] else None)


atan2 = op("atan2(Tensor self, Tensor other) -> Tensor",
           tensors_only("atan2", np.arctan2, to_float=True),
           grads={"self, other": _atan2_grads})


# torch refuses integer inputs rather than promoting them (result dtype is checked first)
hypot = op("hypot(Tensor self, Tensor other) -> Tensor",
           tensors_only("hypot", np.hypot, floats_only=True),
           grads={"self": lambda grad, self, result: grad * self / result,
                  "other": lambda grad, other, result: grad * other / result})


# --- sinc, angle conversions ---------------------------------------------------------------------


def _sinc_grad(grad, self):
    """(pi x cos(pi x) - sin(pi x)) / (pi x^2), and 0 at x = 0 (where sinc is flat)."""
    pix = self * math.pi
    pix2 = self * self * math.pi
    return where(C.eq(pix2, 0.0), 0.0, grad * (pix * cos(pix) - sin(pix)) / pix2)


sinc = op("sinc(Tensor self) -> Tensor", sinc_array, promote="float",
          grads={"self": _sinc_grad})
deg2rad = op("deg2rad(Tensor self) -> Tensor", deg2rad_array, promote="float",
             grads={"self": lambda grad: grad * RAD_PER_DEG})
rad2deg = op("rad2deg(Tensor self) -> Tensor", rad2deg_array, promote="float",
             grads={"self": lambda grad: grad * DEG_PER_RAD})


# --- in-place forms and aliases ------------------------------------------------------------------

_UFUNCS = {"sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
           "atanh": np.arctanh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan}
_ALIASES = {"asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "asin": "arcsin",
            "acos": "arccos", "atan": "arctan"}


def _inplace_without_derivative(name: str, ufunc) -> Any:
    """asinh_, acosh_, atanh_: torch declares these apart from their out-of-place twins, with a
    backward (and forward derivative, forward_ad.NO_FORWARD) that refuses to run."""
    return op(f"{name}_(Tensor(a!) self) -> Tensor(a!)", inplace_forward(ufunc, "float"),
              node=f"{name.title()}Backward1",
              grads={"self": _no_derivative(f"inplace version of {name}")})


_fn: Any
_inplace: Any
for _fn in (sinh, cosh, asinh, acosh, atanh, asin, acos, atan, sinc, deg2rad, rad2deg):
    _name = _fn.opdef.schema.name
    _uf = _UFUNCS.get(_name)
    if _name in ("asinh", "acosh", "atanh"):
        _inplace = _inplace_without_derivative(_name, _uf)
    else:
        _inplace = inplace_of(_fn, direct=_direct_unary(_uf) if _uf is not None else None,
                              function=True)
    globals()[_name + "_"] = _inplace
    if _name in _ALIASES:
        register(_ALIASES[_name], _fn, method=True)
        register(_ALIASES[_name] + "_", _inplace, method=True)

# torch has no torch.atan2_ / torch.hypot_: methods only
atan2_ = inplace_of(atan2)
hypot_ = inplace_of(hypot)
register("arctan2", atan2, method=True)
register_method("arctan2_", atan2_)
