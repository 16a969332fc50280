"""Pointwise arithmetic: add, sub, mul, div and the unary math functions.

Binary ops broadcast and accept Python scalars; `promote="all"` casts inputs to torch's result
dtype first, `promote="float"` additionally sends integer inputs to the default float dtype.
Ops that take a `Scalar` operand, or must look at the dtypes before promotion (bool checks),
promote inside their forward (layout.promoting). Every in-place variant is declared from its
out-of-place op with layout.inplace_of: same formulas, same node name. The NumPy kernels the
declarations run are in kernels/pointwise.py.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._ops import comparison as C
from retrograd._ops.creation import zeros_like
from retrograd._ops.kernels.pointwise import (
    LN2,
    LN10,
    POS_BOOL,
    SQRT_PI,
    _abs,
    _add,
    _addc_direct,
    _addcdiv,
    _addcmul,
    _check_clamp_cast,
    _check_sub,
    _clamp,
    _clamp_mask,
    _clamp_scalar,
    _direct_add,
    _direct_binary,
    _direct_unary,
    _div_floor,
    _div_mode,
    _fill,
    _fmod,
    _frac,
    _lerp,
    _lerp_direct,
    _log_scalar,
    _logit,
    _neg,
    _np_div,
    _np_mul,
    _pow,
    _pow_tensor_scalar,
    _remainder,
    _round_decimals_forward,
    _rounding,
    _rsqrt,
    _rsub,
    _sigmoid,
    _sigmoid_backward,
    _sign,
    _sub_forward,
    _tanh_backward,
    _where,
    erf_array,
)
from retrograd._ops.layout import (
    binary,
    inplace_of,
    pointwise,
    promoting,
    result_dtype,
)
from retrograd._ops.overloads import composite, overloaded
from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor, _wrap

NO_DERIVATIVE = "derivative for aten::{} is not implemented"


def _not_implemented_node(fn):
    """Name an op's node as torch's `torch::autograd::NotImplemented` (its backward raises).

    The registry's node class is renamed in place (generated graph builders hold the class)."""
    od = fn.opdef
    od.node_name = "NotImplemented"
    cls = od.node_cls
    cls.__name__ = cls.__qualname__ = "NotImplemented"
    cls.name = _not_implemented_name
    return fn


def _not_implemented_name(self) -> str:
    return "torch::autograd::NotImplemented"


def _no_derivative(name: str):
    def formula(grad):
        raise RuntimeError(NO_DERIVATIVE.format(name))

    return formula


# --- add, sub, mul, div -------------------------------------------------------------------------


add = op("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _add,
         promote="all",
         grads={"self": lambda grad: grad,
                "other": lambda grad, alpha: grad if alpha == 1 else grad * alpha})

# sub checks for bools before promotion hides them, so it promotes in its forward
sub = op("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _sub_forward,
         grads={"self": lambda grad: grad,
                "other": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha})


_RSUB_GRADS = {"self": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
               "other": lambda grad: grad}
rsub_t = op("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _rsub,
            grads=_RSUB_GRADS, method=False)
# `2 - x` is rsub.Scalar in torch (RsubBackward1)
rsub_s = op("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", _rsub,
            grads={"self": _RSUB_GRADS["self"]}, method=False)
rsub = overloaded("rsub")  # other - alpha * input (torch.rsub; also Tensor.__rsub__)

mul = op("mul.Tensor(Tensor self, Tensor other) -> Tensor", _np_mul, promote="all",
         grads={"self": lambda grad, other: grad * other,
                "other": lambda grad, self: grad * self})

div = op("div.Tensor(Tensor self, Tensor other) -> Tensor", _np_div, promote="float",
         grads={"self": lambda grad, other: grad / other,
                "other": lambda grad, self, other: -grad * ((self / other) / other)})


def _zeros_for(grad, dtype):
    return zeros_like(grad, dtype=dtype)


def _div_mode_self_grad(grad, other, self_dtype, rounding_mode):
    if rounding_mode is not None:
        return _zeros_for(grad, self_dtype)
    return grad / other


def _div_mode_other_grad(grad, self, other, other_dtype, rounding_mode):
    if rounding_mode is not None:
        return _zeros_for(grad, other_dtype)
    return -grad * ((self / other) / other)


# an explicit rounding_mode, even None, selects this overload in torch (DivBackward1 is
# div.Scalar, which retrograd's div.Tensor covers)
div_mode = op("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
              _div_mode, node="DivBackward2",
              grads={"self": _div_mode_self_grad, "other": _div_mode_other_grad})
divide = overloaded("div")  # true division, or rounded with rounding_mode 'trunc' / 'floor'
register("divide", divide)
register_method("divide", overloaded("div", method=True))
register("true_divide", div, method=True)

floor_divide = _not_implemented_node(op(
    "floor_divide(Tensor self, Tensor other) -> Tensor", _div_floor, promote="all",
    grads={"self, other": _no_derivative("floor_divide")}))


# --- remainder, fmod ----------------------------------------------------------------------------


remainder_s = op("remainder.Scalar(Tensor self, Scalar other) -> Tensor",
                 promoting(_remainder, (0, 1)), grads={"self": lambda grad: grad})
remainder_t = op("remainder.Tensor(Tensor self, Tensor other) -> Tensor", _remainder,
                 promote="all",
                 grads={"self": lambda grad: grad,
                        "other": lambda grad, self, other:
                        -grad * div_mode(self, other, rounding_mode="floor")})
remainder_st = _not_implemented_node(op(
    "remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
    promoting(_remainder, (0, 1)), grads={"other": _no_derivative("remainder")}))
remainder = overloaded("remainder")

fmod_s = op("fmod.Scalar(Tensor self, Scalar other) -> Tensor", promoting(_fmod, (0, 1)),
            grads={"self": lambda grad: grad})
fmod_t = op("fmod.Tensor(Tensor self, Tensor other) -> Tensor", _fmod, promote="all",
            grads={"self": lambda grad: grad,
                   "other": lambda grad, self, other:
                   -grad * div_mode(self, other, rounding_mode="trunc")})
fmod = overloaded("fmod")


# --- pow -----------------------------------------------------------------------------------------


def _pow_scalar_grad(grad, self, exponent):
    if exponent == 0:
        return zeros_like(self)
    return grad * (exponent * pow_ts(self, exponent - 1))


def _pow_self_grad(grad, self, exponent):
    return where(C.eq(exponent, 0), 0.0, grad * (exponent * pow_tt(self, exponent - 1)))


def _pow_exponent_grad(grad, self, exponent, result):
    cond = C.logical_and(C.eq(self, 0), C.ge(exponent, 0))
    return grad * where(cond, 0.0, result * log(self))


def _pow_base_grad(grad, self, exponent, result):
    if self == 0:
        return grad * where(C.ge(exponent, 0), 0.0, result * -math.inf)
    return grad * (result * _log_scalar(self))


pow_ts = op("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", _pow_tensor_scalar,
            grads={"self": _pow_scalar_grad})
pow_tt = op("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
            pointwise(promoting(_pow, (0, 1))),
            grads={"self": _pow_self_grad, "exponent": _pow_exponent_grad})
pow_s = op("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", promoting(_pow, (0, 1)),
           grads={"exponent": _pow_base_grad})
pow = overloaded("pow")  # noqa: A001 - torch's name


def square(input: Tensor) -> Tensor:
    return pow_ts(input, 2)


register("square", square, method=True)


# --- unary math ----------------------------------------------------------------------------------


neg = op("neg(Tensor self) -> Tensor", _neg, grads={"self": lambda grad: -grad})
register("negative", neg, method=True)


def positive(input: Tensor) -> Tensor:
    if input._data.dtype.kind == "b":
        raise RuntimeError(POS_BOOL)
    return input


register("positive", positive, method=True)


abs = op("abs(Tensor self) -> Tensor", _abs,  # noqa: A001 - torch's name
         grads={"self": lambda grad, self: grad * sign(self)})
register("absolute", abs, method=True)


sign = op("sign(Tensor self) -> Tensor", _sign, grads={"self": lambda grad: zeros_like(grad)})
sgn = op("sgn(Tensor self) -> Tensor", _sign, grads={"self": lambda grad: zeros_like(grad)})

exp = op("exp(Tensor self) -> Tensor", np.exp, promote="float",
         grads={"self": lambda grad, result: grad * result})

exp2 = op("exp2(Tensor self) -> Tensor", np.exp2, promote="float",
          grads={"self": lambda grad, result: grad * (result * LN2)})

expm1 = op("expm1(Tensor self) -> Tensor", np.expm1, promote="float",
           grads={"self": lambda grad, result: grad * (result + 1)})

log = op("log(Tensor self) -> Tensor", np.log, promote="float",
         grads={"self": lambda grad, self: grad / self})

log2 = op("log2(Tensor self) -> Tensor", np.log2, promote="float",
          grads={"self": lambda grad, self: grad / (self * LN2)})

log10 = op("log10(Tensor self) -> Tensor", np.log10, promote="float",
           grads={"self": lambda grad, self: grad / (self * LN10)})

log1p = op("log1p(Tensor self) -> Tensor", np.log1p, promote="float",
           grads={"self": lambda grad, self: grad / (self + 1)})

sqrt = op("sqrt(Tensor self) -> Tensor", np.sqrt, promote="float",
          grads={"self": lambda grad, result: grad / (2 * result)})


rsqrt = op("rsqrt(Tensor self) -> Tensor", _rsqrt, promote="float",
           grads={"self": lambda grad, result: -0.5 * grad * pow_ts(result, 3)})

sin = op("sin(Tensor self) -> Tensor", np.sin, promote="float",
         grads={"self": lambda grad, self: grad * cos(self)})

cos = op("cos(Tensor self) -> Tensor", np.cos, promote="float",
         grads={"self": lambda grad, self: grad * -sin(self)})

tan = op("tan(Tensor self) -> Tensor", np.tan, promote="float",
         grads={"self": lambda grad, result: grad * (1 + result * result)})


# tanh's and sigmoid's backward are ops of their own (as in torch): one Python op in backward
# instead of three, and differentiable again for double backward
tanh_backward = op("tanh_backward(Tensor grad_output, Tensor output) -> Tensor", _tanh_backward,
                   grads={"grad_output": lambda grad, output: tanh_backward(grad, output),
                          "output": lambda grad, grad_output, output:
                          grad * grad_output * output * -2},
                   function=False, method=False)

tanh = op("tanh(Tensor self) -> Tensor", np.tanh, promote="float",
          grads={"self": lambda grad, result: tanh_backward(grad, result)})


sigmoid_backward = op("sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
                      _sigmoid_backward,
                      grads={"grad_output": lambda grad, output: sigmoid_backward(grad, output),
                             "output": lambda grad, grad_output, output:
                             grad * grad_output * (1 - 2 * output)},
                      function=False, method=False)

sigmoid = op("sigmoid(Tensor self) -> Tensor", _sigmoid, promote="float",
             grads={"self": lambda grad, result: sigmoid_backward(grad, result)})

def _logit_grad(grad, self, eps):
    """grad / (x (1 - x)) where x lies in [eps, 1 - eps] (in [0, 1], NaN outside, without
    eps), written with where so that it differentiates again (torch's formula in grad mode)."""
    lo, hi, fill = (0.0, 1.0, math.nan) if eps is None else (eps, 1.0 - eps, 0.0)
    inside = C.logical_and(C.ge(self, lo), C.le(self, hi))
    return where(inside, grad / (self * (1.0 - self)), fill)


logit = op("logit(Tensor self, float? eps=None) -> Tensor", _logit, promote="float",
           grads={"self": _logit_grad})

reciprocal = op("reciprocal(Tensor self) -> Tensor", np.reciprocal, promote="float",
                grads={"self": lambda grad, result: -grad * (result * result)})


erf = op("erf(Tensor self) -> Tensor", erf_array, promote="float",
         grads={"self": lambda grad, self: grad * ((2.0 / SQRT_PI) * exp(-(self * self)))})


# --- rounding ------------------------------------------------------------------------------------


_ZERO = {"self": lambda grad: zeros_like(grad)}

floor = op("floor(Tensor self) -> Tensor", _rounding(np.floor, "floor_vml_cpu"), grads=_ZERO)
ceil = op("ceil(Tensor self) -> Tensor", _rounding(np.ceil, "ceil_vml_cpu"), grads=_ZERO)
trunc = op("trunc(Tensor self) -> Tensor", _rounding(np.trunc, "trunc_vml_cpu"), grads=_ZERO)
register("fix", trunc, method=True)
# an explicit decimals, even 0, selects round.decimals (RoundBackward1) in torch
_round = op("round(Tensor self) -> Tensor", _rounding(np.rint, "round_vml_cpu"), grads=_ZERO)


_round_decimals = op("round.decimals(Tensor self, *, int decimals) -> Tensor",
                     _round_decimals_forward, grads=_ZERO)
round = overloaded("round")  # noqa: A001 - torch's name


frac = op("frac(Tensor self) -> Tensor", _frac, grads={"self": lambda grad: grad})


# --- lerp, addcmul, addcdiv ----------------------------------------------------------------------


lerp_s = op("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", pointwise(_lerp),
            grads={"self": lambda grad, weight: grad * (1 - weight),
                   "end": lambda grad, weight: grad * weight})


def _lerp_tensor_jvp(self, end, weight, self_t, end_t, weight_t):
    """torch's: lerp of the tangents (zeros where there are none), plus weight's term where
    weight has a tangent (the elementwise rule's sum of three terms rounds otherwise)."""
    out = lerp_t(zeros_like(self) if self_t is None else self_t,
                 zeros_like(end) if end_t is None else end_t, weight)
    return out if weight_t is None else out + weight_t * (end - self)


lerp_t = op("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", pointwise(_lerp),
            grads={"self": lambda grad, weight: grad * (1 - weight),
                   "end": lambda grad, weight: grad * weight,
                   "weight": lambda grad, self, end: grad * (end - self)},
            jvp=_lerp_tensor_jvp)
lerp = overloaded("lerp")


addcmul = op("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
             pointwise(_addcmul), promote="all",
             grads={"self": lambda grad: grad,
                    "tensor1": lambda grad, tensor2, value: grad * tensor2 * value,
                    "tensor2": lambda grad, tensor1, value: grad * tensor1 * value})

addcdiv = op("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
             pointwise(_addcdiv),
             grads={"self": lambda grad: grad,
                    "tensor1": lambda grad, tensor2, value: grad * value / tensor2,
                    "tensor2": lambda grad, tensor1, tensor2, value:
                    -grad * value * tensor1 / (tensor2 * tensor2)})


# --- clamp, where, maximum, minimum -------------------------------------------------------------


def _clamp_grad(grad, self, min, max):  # noqa: A002 - torch's argument names
    mask = _clamp_mask(self, min, max, C.ge, C.le, C.logical_and)
    return grad if mask is None else where(mask, grad, 0.0)


def _clamp_min_max_grad(grad, self, min, max, output_mask):  # noqa: A002
    """Gradients of clamp.Tensor for min and max: where they were the value taken."""
    gmin = gmax = None
    if min is not None and max is not None:
        if output_mask[1]:
            gmin = where(C.logical_and(C.lt(self, min), C.lt(min, max)), grad, 0.0)
        if output_mask[2]:
            gmax = where(C.logical_or(C.gt(self, max), C.lt(max, min)), grad, 0.0)
    elif min is not None and output_mask[1]:
        gmin = where(C.lt(self, min), grad, 0.0)
    elif max is not None and output_mask[2]:
        gmax = where(C.gt(self, max), grad, 0.0)
    return gmin, gmax


clamp_t = op("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
             pointwise(promoting(_clamp, (0, 1, 2))),
             grads={"self": _clamp_grad, "min, max": _clamp_min_max_grad})
clamp_s = op("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", _clamp_scalar,
             grads={"self": _clamp_grad})
clamp = overloaded("clamp")
register("clip", clamp)
register_method("clip", overloaded("clamp", method=True))

clamp_min_s = op("clamp_min(Tensor self, Scalar min) -> Tensor",
                 lambda a, lo: _clamp_scalar(a, lo, None),
                 grads={"self": lambda grad, self, min: where(C.ge(self, min), grad, 0.0)})
clamp_min_t = op("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor",
                 binary(promoting(np.maximum, (0, 1))),
                 grads={"self": lambda grad, self, min: where(C.ge(self, min), grad, 0.0),
                        "min": lambda grad, self, min: where(C.lt(self, min), grad, 0.0)})
clamp_max_s = op("clamp_max(Tensor self, Scalar max) -> Tensor",
                 lambda a, hi: _clamp_scalar(a, None, hi),
                 grads={"self": lambda grad, self, max: where(C.le(self, max), grad, 0.0)})
clamp_max_t = op("clamp_max.Tensor(Tensor self, Tensor max) -> Tensor",
                 binary(promoting(np.minimum, (0, 1))),
                 grads={"self": lambda grad, self, max: where(C.le(self, max), grad, 0.0),
                        "max": lambda grad, self, max: where(C.gt(self, max), grad, 0.0)})


_where_op = op("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
               pointwise(_where),
               grads={"self": lambda grad, condition: where(condition, grad, 0.0),
                      "other": lambda grad, condition: where(condition, 0.0, grad)},
               method=False)


def _where_scalars(condition: Tensor, self, other) -> Tensor:
    """where with a number for either branch: where.self on it (the number takes part in
    type promotion as a Python scalar)."""
    return _where_op(condition, self, other)


def _nonzero_tuple(condition: Tensor) -> tuple:
    """where(condition): the indices of the true elements, one tensor per dim."""
    return tuple(_wrap(i.astype(np.int64, copy=False))
                 for i in np.nonzero(np.asarray(condition._data)))


composite("where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
          _where_scalars, method=False)
composite("where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
          _where_scalars, method=False)
composite("where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor", _where_scalars,
          method=False)
composite("where(Tensor condition) -> Tensor[]", _nonzero_tuple, method=False)


def _where_method(self: Tensor, condition: Tensor, other) -> Tensor:
    return _where_op(condition, self, other)


# Tensor.where(condition, other): `self` is the value where condition holds
composite("where.self(Tensor self, Tensor condition, Tensor other) -> Tensor", _where_method,
          function=False)
composite("where.ScalarOther(Tensor self, Tensor condition, Scalar other) -> Tensor",
          _where_method, function=False)
where = overloaded("where")


def _max_grad(grad, self, other, flip: bool):
    """maximum/minimum: the gradient goes to the larger (smaller) input, split evenly on ties."""
    keep = where(C.eq(self, other), grad / 2, grad)
    lose = C.lt(self, other) if not flip else C.gt(self, other)
    return where(lose, 0.0, keep)


maximum = op("maximum(Tensor self, Tensor other) -> Tensor", binary(np.maximum), promote="all",
             grads={"self": lambda grad, self, other: _max_grad(grad, self, other, False),
                    "other": lambda grad, self, other: _max_grad(grad, other, self, False)})
minimum = op("minimum(Tensor self, Tensor other) -> Tensor", binary(np.minimum), promote="all",
             grads={"self": lambda grad, self, other: _max_grad(grad, self, other, True),
                    "other": lambda grad, self, other: _max_grad(grad, other, self, True)})


# --- in-place variants ---------------------------------------------------------------------------


add_ = inplace_of(add, direct=_direct_add(np.add))
sub_ = inplace_of(sub, direct=_direct_add(np.subtract),
                  check=lambda a, b, alpha: _check_sub(a, b))
mul_ = inplace_of(mul, direct=_direct_binary(np.multiply))
div_t_ = inplace_of(div, direct=_direct_binary(np.true_divide), name="div_")
div_mode_ = inplace_of(div_mode, name="div_")
floor_divide_ = _not_implemented_node(inplace_of(floor_divide))
remainder_t_ = inplace_of(remainder_t, name="remainder_")
remainder_s_ = inplace_of(remainder_s, name="remainder_")
fmod_t_ = inplace_of(fmod_t, name="fmod_")
fmod_s_ = inplace_of(fmod_s, name="fmod_")
pow_ts_ = inplace_of(pow_ts, name="pow_")
pow_tt_ = inplace_of(pow_tt, name="pow_")


lerp_s_ = inplace_of(lerp_s, name="lerp_", direct=_lerp_direct)
lerp_t_ = inplace_of(lerp_t, name="lerp_")


clamp_s_ = inplace_of(clamp_s, name="clamp_", check=_check_clamp_cast)
clamp_t_ = inplace_of(clamp_t, name="clamp_")
clamp_min_s_ = inplace_of(clamp_min_s, name="clamp_min_", check=_check_clamp_cast)
clamp_min_t_ = inplace_of(clamp_min_t, name="clamp_min_")
clamp_max_s_ = inplace_of(clamp_max_s, name="clamp_max_", check=_check_clamp_cast)
clamp_max_t_ = inplace_of(clamp_max_t, name="clamp_max_")
round_ = inplace_of(_round, name="round_")
round_decimals_ = inplace_of(_round_decimals, name="round_")
logit_ = inplace_of(logit, function=True)


addcmul_ = inplace_of(addcmul, direct=_addc_direct(np.multiply))
addcdiv_ = inplace_of(addcdiv, direct=_addc_direct(np.true_divide))

_UNARY_UFUNCS = {"neg": np.negative, "abs": np.abs, "exp": np.exp, "exp2": np.exp2,
                 "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
                 "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
                 "tanh": np.tanh, "reciprocal": np.reciprocal, "floor": np.floor,
                 "ceil": np.ceil, "trunc": np.trunc}
_IN_TORCH_NS = {"neg", "abs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
                "sin", "cos", "tan", "tanh", "reciprocal", "floor", "ceil", "trunc", "rsqrt",
                "sigmoid", "frac", "erf"}
for _fn in (neg, abs, sign, sgn, exp, exp2, expm1, log, log2, log10, log1p, sqrt, rsqrt, sin,
            cos, tan, tanh, sigmoid, reciprocal, erf, floor, ceil, trunc, frac):
    _name = _fn.opdef.schema.name
    _uf = _UNARY_UFUNCS.get(_name)
    globals()[_name + "_"] = inplace_of(
        _fn, direct=_direct_unary(_uf) if _uf is not None else None,
        function=_name in _IN_TORCH_NS)
register_method("negative_", globals()["neg_"])
register_method("absolute_", globals()["abs_"])
register_method("fix_", globals()["trunc_"])
register("fix_", globals()["trunc_"])


register_method("divide_", overloaded("div_", method=True))
register_method("true_divide_", div_t_)
register_method("square_", lambda self: pow_ts_(self, 2))
register_method("clip_", overloaded("clamp_", method=True))


# --- zero_, fill_ -------------------------------------------------------------------------------


zero_ = op("zero_(Tensor(a!) self) -> Tensor(a!)", lambda dst: dst.fill(0),
           grads={"self": lambda grad: zeros_like(grad)}, function=False)
# FillBackward0 and 1 are torch's out-of-place fill, which retrograd does not declare
fill_s_ = op("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", _fill,
             node="FillBackward2", grads={"self": lambda grad: zeros_like(grad)})
fill_t_ = op("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", _fill,
             grads={"self": lambda grad: zeros_like(grad), "value": lambda grad: grad.sum()})
register("zero_", zero_)


def _filled(a, value):
    """torch.fill: a new tensor of self's shape and dtype holding `value`."""
    out = np.empty(a.shape, a.dtype)
    _fill(out, value)
    return out


fill_s = op("fill.Scalar(Tensor self, Scalar value) -> Tensor", _filled, node="FillBackward0",
            grads={"self": lambda grad: zeros_like(grad)}, method=False)
fill_t = op("fill.Tensor(Tensor self, Tensor value) -> Tensor", _filled, node="FillBackward1",
            grads={"self": lambda grad: zeros_like(grad), "value": lambda grad: grad.sum()},
            method=False)
register("fill", overloaded("fill"))


# --- operators -----------------------------------------------------------------------------------

def _rtruediv(self: Tensor, other) -> Tensor:
    # torch computes `other / self` as self.reciprocal() * other (so the node is MulBackward0)
    return mul(reciprocal(self), other)


def _rfloordiv(self: Tensor, other) -> Tensor:
    return floor_divide(_as_tensor(other, self), self)


def _as_tensor(value, like: Tensor) -> Tensor:
    """A Python number as the 0-d tensor torch wraps it in (its dtype decides promotion)."""
    from retrograd._ops.creation import tensor

    if isinstance(value, Tensor):
        return value
    return tensor(value, dtype=result_dtype([value]))


def _rpow(self: Tensor, other) -> Tensor:
    return pow_s(other, self)


Tensor.__pow__ = pow
Tensor.__rpow__ = _rpow
Tensor.__abs__ = abs
Tensor.__pos__ = positive
Tensor.__floordiv__ = floor_divide
Tensor.__rfloordiv__ = _rfloordiv
Tensor.__mod__ = remainder
Tensor.__rmod__ = lambda self, other: remainder_st(other, self)
Tensor.__iadd__ = add_
Tensor.__isub__ = sub_
Tensor.__imul__ = mul_
Tensor.__itruediv__ = div_t_
Tensor.__idiv__ = div_t_  # Python 2's name, which torch's Tensor still has
Tensor.__ifloordiv__ = floor_divide_
Tensor.__imod__ = overloaded("remainder_", method=True)
Tensor.__ipow__ = overloaded("pow_", method=True)
# operators.install() (run later) sets __rtruediv__ as a true division; methods registered
# here are installed after it, so torch's reciprocal-then-multiply form wins
register_method("__rtruediv__", _rtruediv)
register_method("__rdiv__", _rtruediv)
