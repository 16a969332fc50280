"""Pointwise arithmetic: add, sub, mul, div and the unary math functions.

Binary ops broadcast and accept Python scalars; `promote="all"` casts inputs to torch's result
dtype first, `promote="float"` additionally sends integer inputs to the default float dtype.
Ops that take a `Scalar` operand, or must look at the dtypes before promotion (bool checks),
promote inside their forward (layout.promoting). Every in-place variant is declared from its
out-of-place op with layout.inplace_of: same formulas, same node name.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._ops import comparison as C
from retrograd._ops.creation import zeros_like
from retrograd._ops.layout import (
    binary,
    inplace_of,
    not_implemented,
    pointwise,
    promote_args,
    promoting,
    result_dtype,
)
from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor

LN2 = math.log(2.0)
LN10 = math.log(10.0)
SQRT_PI = math.sqrt(math.pi)

SUB_BOOLS = "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` " \
    "or `logical_xor()` operator instead."
SUB_BOOL = "Subtraction, the `-` operator, with a bool tensor is not supported. If you are " \
    "trying to invert a mask, use the `~` or `logical_not()` operator instead."
NEG_BOOL = "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to " \
    "invert a mask, use the `~` or `logical_not()` operator instead."
POS_BOOL = "The `+` operator, on a bool tensor is not supported."
ALPHA_FLOAT = "For integral input tensors, argument alpha must not be a floating point number."
ALPHA_BOOL = "Boolean alpha only supported for Boolean results."
ZERO_DIV = "ZeroDivisionError"
ROUNDING_MODE = "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'"
NEG_INT_POW = "Integers to negative integer powers are not allowed."
ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
    "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
    "dtypes."
)
CLAMP_NONE = "torch.clamp: At least one of 'min' or 'max' must not be None"
LERP_DTYPE = "expected dtype {} for `{}` but got dtype {}"
WHERE_COND = "where expected condition to be a boolean tensor, but got a tensor with dtype {}"
NO_DERIVATIVE = "derivative for aten::{} is not implemented"


def _int_like(x) -> bool:
    return x.dtype.kind in "iub" if type(x) is np.ndarray else not isinstance(x, float)


def _is_bool(x) -> bool:
    return x.dtype.kind == "b" if type(x) is np.ndarray else type(x) is bool


def _check_kind(a, kernel: str, kinds: str = "b") -> None:
    """torch's NotImplementedError for a dtype a kernel has no implementation for."""
    if type(a) is np.ndarray and a.dtype.kind in kinds:
        raise not_implemented(kernel, a.dtype)


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

_np_add, _np_sub, _np_mul, _np_div = (binary(np.add), binary(np.subtract), binary(np.multiply),
                                      binary(np.true_divide))


def _scaled(b, alpha, like):
    """b * alpha in b's dtype (alpha is a Python number; torch checks it against the dtype)."""
    kind = like.dtype.kind if type(like) is np.ndarray else "f"
    if type(alpha) is bool and kind != "b":
        raise RuntimeError(ALPHA_BOOL)
    if kind in "iub" and isinstance(alpha, float):
        raise RuntimeError(ALPHA_FLOAT)
    if type(b) is not np.ndarray:
        return bool(b and alpha) if kind == "b" else b * alpha
    if b.dtype.kind == "b":
        return np.logical_and(b, bool(alpha))
    if b.dtype.kind == "V":
        alpha = b.dtype.type(alpha)
    return np.multiply(b, alpha)


def _add(a, b, alpha):
    if alpha == 1 and alpha is not True:
        return _np_add(a, b)
    return _np_add(a, _scaled(b, alpha, a))


def _check_sub(a, b) -> None:
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(SUB_BOOLS if _is_bool(a) and _is_bool(b) else SUB_BOOL)


def _sub(a, b, alpha):
    if alpha == 1 and alpha is not True:
        return _np_sub(a, b)
    return _np_sub(a, _scaled(b, alpha, a))


def _sub_forward(a, b, alpha):
    if alpha == 1 and a.dtype.kind == "f":
        c = b.__class__
        if c is float or c is int or (c is np.ndarray and a.dtype is b.dtype):
            return _np_sub(a, b)  # the common cases: nothing to check or promote
    _check_sub(a, b)
    return _sub(*promote_args((a, b), (0, 1)), alpha)


add = op("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _add,
         promote="all",
         grads={"self": lambda grad: grad,
                "other": lambda grad, alpha: grad if alpha == 1 else grad * alpha},
         array_grads={"self": lambda grad: grad,
                      "other": lambda grad, alpha: grad if alpha == 1 else grad * alpha})

# sub checks for bools before promotion hides them, so it promotes in its forward
sub = op("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _sub_forward,
         grads={"self": lambda grad: grad,
                "other": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha},
         array_grads={"self": lambda grad: grad,
                      "other": lambda grad, alpha: np.negative(grad) if alpha == 1
                      else grad * -alpha})


def _rsub(a, b, alpha):
    _check_sub(a, b)
    a, b = promote_args((a, b), (0, 1))
    return _sub(b, a, alpha)


_RSUB_GRADS = {"self": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
               "other": lambda grad: grad}
rsub_t = op("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _rsub,
            grads=_RSUB_GRADS, function=False, method=False)
# `2 - x` is rsub.Scalar in torch (RsubBackward1)
rsub_s = op("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", _rsub,
            node="RsubBackward1", grads={"self": _RSUB_GRADS["self"]},
            function=False, method=False)


def rsub(input: Tensor, other, alpha=1) -> Tensor:
    """other - alpha * input (torch.rsub; also Tensor.__rsub__)."""
    if isinstance(other, Tensor):
        return rsub_t(input, other, alpha=alpha)
    return rsub_s(input, other, alpha)


register("rsub", rsub)

mul = op("mul.Tensor(Tensor self, Tensor other) -> Tensor", _np_mul, promote="all",
         grads={"self": lambda grad, other: grad * other,
                "other": lambda grad, self: grad * self},
         array_grads={"self": lambda grad, other: np.multiply(grad, other),
                      "other": lambda grad, self: np.multiply(grad, self)})

div = op("div.Tensor(Tensor self, Tensor other) -> Tensor", _np_div, promote="float",
         grads={"self": lambda grad, other: grad / other,
                "other": lambda grad, self, other: -grad * ((self / other) / other)},
         array_grads={"self": lambda grad, other: np.true_divide(grad, other),
                      "other": lambda grad, self, other: np.multiply(
                          np.negative(grad),
                          np.true_divide(np.true_divide(self, other), other))})


def _check_int_zero(b) -> None:
    """Integer division by zero raises in torch (NumPy would return 0 with a warning)."""
    if type(b) is np.ndarray:
        if b.dtype.kind in "iub" and not b.all():
            raise RuntimeError(ZERO_DIV)
    elif not isinstance(b, float) and b == 0:
        raise RuntimeError(ZERO_DIV)


def _div_floor(a, b):
    if a.dtype.kind in "iub":
        _check_kind(a, "div_floor_cpu")
        _check_int_zero(b)
    return _np_floor_divide(a, b)


def _div_trunc(a, b):
    if a.dtype.kind not in "iub":
        return np.trunc(_np_div(a, b))
    _check_kind(a, "div_trunc_cpu")
    _check_int_zero(b)
    q = _np_floor_divide(a, b)
    # floor and trunc differ where the division is inexact and the signs differ
    fix = (np.remainder(a, b) != 0) & ((np.less(a, 0)) != (np.less(b, 0)))
    return q + fix.astype(q.dtype) if fix.any() else q


_np_floor_divide = binary(np.floor_divide)


def _div_mode(a, b, rounding_mode):
    if rounding_mode is None:
        return _np_div(*promote_args((a, b), (0, 1), to_float=True))
    a, b = promote_args((a, b), (0, 1))
    if rounding_mode == "trunc":
        return _div_trunc(a, b)
    return _div_floor(a, b)


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


# an explicit rounding_mode, even None, selects this overload in torch
div_mode = op("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
              _div_mode, node="DivBackward2",
              grads={"self": _div_mode_self_grad, "other": _div_mode_other_grad},
              function=False, method=False)


def _check_mode(rounding_mode) -> None:
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(ROUNDING_MODE.format(rounding_mode))


_UNSET = object()


def divide(input: Tensor, other, *, rounding_mode=_UNSET) -> Tensor:
    """torch.div: true division, or rounded division with rounding_mode 'trunc' / 'floor'."""
    if rounding_mode is _UNSET:
        return div(input, other)
    _check_mode(rounding_mode)
    return div_mode(input, other, rounding_mode=rounding_mode)


register("div", divide, method=True)
register("divide", divide, method=True)
register("true_divide", div, method=True)

floor_divide = _not_implemented_node(op(
    "floor_divide(Tensor self, Tensor other) -> Tensor", _div_floor, promote="all",
    grads={"self, other": _no_derivative("floor_divide")}))


# --- remainder, fmod ----------------------------------------------------------------------------

def _check_int_division(a, b, kernel: str) -> None:
    """Integer remainder / fmod: no bools, no division by zero (checked on promoted operands)."""
    arr = a if type(a) is np.ndarray else b
    if arr.dtype.kind in "iub":
        _check_kind(arr, kernel)
        _check_int_zero(b)


def _remainder(a, b):
    _check_int_division(a, b, "remainder_cpu")
    return _np_remainder(a, b)


def _fmod(a, b):
    _check_int_division(a, b, "fmod_cpu")
    return _np_fmod(a, b)


_np_remainder, _np_fmod = binary(np.remainder), binary(np.fmod)

remainder_t = op("remainder.Tensor(Tensor self, Tensor other) -> Tensor", _remainder,
                 promote="all", node="RemainderBackward1",
                 grads={"self": lambda grad: grad,
                        "other": lambda grad, self, other:
                        -grad * div_mode(self, other, rounding_mode="floor")},
                 function=False, method=False)
remainder_s = op("remainder.Scalar(Tensor self, Scalar other) -> Tensor",
                 promoting(_remainder, (0, 1)), node="RemainderBackward0",
                 grads={"self": lambda grad: grad}, function=False, method=False)
remainder_st = _not_implemented_node(op(
    "remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
    promoting(_remainder, (0, 1)), grads={"other": _no_derivative("remainder")},
    function=False, method=False))

fmod_t = op("fmod.Tensor(Tensor self, Tensor other) -> Tensor", _fmod, promote="all",
            node="FmodBackward1",
            grads={"self": lambda grad: grad,
                   "other": lambda grad, self, other:
                   -grad * div_mode(self, other, rounding_mode="trunc")},
            function=False, method=False)
fmod_s = op("fmod.Scalar(Tensor self, Scalar other) -> Tensor", promoting(_fmod, (0, 1)),
            node="FmodBackward0", grads={"self": lambda grad: grad},
            function=False, method=False)


def remainder(input, other) -> Tensor:
    if isinstance(other, Tensor):
        return remainder_t(input, other)
    if isinstance(input, Tensor):
        return remainder_s(input, other)
    return remainder_st(input, other)


def fmod(input: Tensor, other) -> Tensor:
    return fmod_t(input, other) if isinstance(other, Tensor) else fmod_s(input, other)


register("remainder", remainder, method=True)
register("fmod", fmod, method=True)


# --- pow -----------------------------------------------------------------------------------------

def _int_pow(a, b):
    """Integer power with torch's rule for negative exponents: 1 and -1 stay, others go to 0."""
    neg = np.less(b, 0)
    if not np.any(neg):
        return np.power(a, b)
    safe = np.power(a, np.where(neg, 0, b))
    one = np.ones((), dtype=safe.dtype)
    odd = np.remainder(b, 2) != 0
    small = np.where(np.equal(a, 1), one, np.where(np.equal(a, -1),
                                                    np.where(odd, -one, one), 0 * one))
    return np.where(neg, small, safe).astype(safe.dtype, copy=False)


def _pow(a, b):
    if type(a) is np.ndarray and a.dtype.kind == "b" and _is_bool(b):
        raise not_implemented("pow", a.dtype)
    if type(b) is np.ndarray and b.dtype.kind == "b" and _is_bool(a):
        raise not_implemented("pow", b.dtype)
    dt = a.dtype if type(a) is np.ndarray else b.dtype
    if dt.kind in "iub":
        return _int_pow(a, b)
    return np.power(a, b)


def _pow_tensor_scalar(a, exponent):
    if a.dtype.kind in "iub" and not isinstance(exponent, float) and exponent < 0:
        raise RuntimeError(NEG_INT_POW)
    a, exponent = promote_args((a, exponent), (0, 1))
    if a.dtype.kind in "iub":
        if a.dtype.kind == "b":  # bool ** bool: x ** True is x, x ** False is all True
            return a.copy() if exponent else np.ones(a.shape, bool)
        return np.power(a, exponent)
    if exponent == 2:
        return np.square(a)
    if a.dtype.itemsize < 4:  # half types: float32 math, so the exponent is not rounded
        return np.power(a.astype(np.float32), float(exponent)).astype(a.dtype)
    return np.power(a, exponent)


def _pow_scalar_grad(grad, self, exponent):
    if exponent == 0:
        return zeros_like(self)
    return grad * (exponent * pow_ts(self, exponent - 1))


def _pow_scalar_grad_array(grad, self, exponent):
    """_pow_scalar_grad on arrays (NOTE [Array formulas])."""
    if exponent == 0:
        return np.zeros_like(self)
    return np.multiply(grad, np.multiply(exponent, _pow_tensor_scalar(self, exponent - 1)))


def _masked(grad: np.ndarray, mask) -> np.ndarray:
    """where(mask, grad, 0) on arrays: a product with the mask, which a branch-free loop
    computes many times faster than np.where; where grad is not finite outside the mask
    (inf * 0 is nan), np.where gives the exact zeros."""
    with np.errstate(invalid="ignore"):
        out = np.asarray(np.multiply(grad, mask, dtype=grad.dtype))
    if out.dtype.kind == "f" and not np.isfinite(out).all():
        return np.asarray(np.where(mask, grad, 0))
    return out


def _pow_self_grad(grad, self, exponent):
    return where(C.eq(exponent, 0), 0.0, grad * (exponent * pow_tt(self, exponent - 1)))


def _pow_exponent_grad(grad, self, exponent, result):
    cond = C.logical_and(C.eq(self, 0), C.ge(exponent, 0))
    return grad * where(cond, 0.0, result * log(self))


def _log_scalar(x) -> float:
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _pow_base_grad(grad, self, exponent, result):
    if self == 0:
        return grad * where(C.ge(exponent, 0), 0.0, result * -math.inf)
    return grad * (result * _log_scalar(self))


pow_ts = op("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", _pow_tensor_scalar,
            node="PowBackward0", grads={"self": _pow_scalar_grad},
            array_grads={"self": lambda grad, self, exponent: _pow_scalar_grad_array(
                grad, self, exponent)},
            function=False, method=False)
pow_tt = op("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
            pointwise(promoting(_pow, (0, 1))), node="PowBackward1",
            grads={"self": _pow_self_grad, "exponent": _pow_exponent_grad},
            function=False, method=False)
pow_s = op("pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
           promoting(_pow, (0, 1)), node="PowBackward2",
           grads={"exponent": _pow_base_grad}, function=False, method=False)


def pow(input, exponent) -> Tensor:  # noqa: A001 - torch's name
    if isinstance(exponent, Tensor):
        return pow_tt(input, exponent) if isinstance(input, Tensor) else pow_s(input, exponent)
    return pow_ts(input, exponent)


def square(input: Tensor) -> Tensor:
    return pow_ts(input, 2)


register("pow", pow, method=True)
register("square", square, method=True)


# --- unary math ----------------------------------------------------------------------------------

def _neg(a):
    if a.dtype.kind == "b":
        raise RuntimeError(NEG_BOOL)
    return np.negative(a)


neg = op("neg(Tensor self) -> Tensor", _neg, grads={"self": lambda grad: -grad},
         array_grads={"self": lambda grad: np.negative(grad)})
register("negative", neg, method=True)


def positive(input: Tensor) -> Tensor:
    if input._data.dtype.kind == "b":
        raise RuntimeError(POS_BOOL)
    return input


register("positive", positive, method=True)


def _abs(a):
    _check_kind(a, "abs_cpu")
    return np.abs(a)


abs = op("abs(Tensor self) -> Tensor", _abs,  # noqa: A001 - torch's name
         grads={"self": lambda grad, self: grad * sign(self)},
         array_grads={"self": lambda grad, self: np.multiply(grad, _sign(self))})
register("absolute", abs, method=True)


def _sign(a):
    if a.dtype.kind in "fV":
        # torch's sign is (x > 0) - (x < 0): 0 for NaN, where NumPy gives NaN
        out = np.greater(a, 0).astype(a.dtype)
        out -= np.less(a, 0)
        return out
    return a.copy() if a.dtype.kind == "b" else np.sign(a)


sign = op("sign(Tensor self) -> Tensor", _sign, grads={"self": lambda grad: zeros_like(grad)})
sgn = op("sgn(Tensor self) -> Tensor", _sign, grads={"self": lambda grad: zeros_like(grad)})

exp = op("exp(Tensor self) -> Tensor", np.exp, promote="float",
         grads={"self": lambda grad, result: grad * result},
         array_grads={"self": lambda grad, result: np.multiply(grad, result)})

exp2 = op("exp2(Tensor self) -> Tensor", np.exp2, promote="float",
          grads={"self": lambda grad, result: grad * (result * LN2)})

expm1 = op("expm1(Tensor self) -> Tensor", np.expm1, promote="float",
           grads={"self": lambda grad, result: grad * (result + 1)})

log = op("log(Tensor self) -> Tensor", np.log, promote="float",
         grads={"self": lambda grad, self: grad / self},
         array_grads={"self": lambda grad, self: np.true_divide(grad, self)})

log2 = op("log2(Tensor self) -> Tensor", np.log2, promote="float",
          grads={"self": lambda grad, self: grad / (self * LN2)})

log10 = op("log10(Tensor self) -> Tensor", np.log10, promote="float",
           grads={"self": lambda grad, self: grad / (self * LN10)})

log1p = op("log1p(Tensor self) -> Tensor", np.log1p, promote="float",
           grads={"self": lambda grad, self: grad / (self + 1)})

sqrt = op("sqrt(Tensor self) -> Tensor", np.sqrt, promote="float",
          grads={"self": lambda grad, result: grad / (2 * result)},
          array_grads={"self": lambda grad, result: np.true_divide(grad,
                                                                   np.multiply(result, 2))})


def _rsqrt(a):
    r = np.sqrt(a)
    if type(r) is np.ndarray:
        return np.reciprocal(r, out=r)
    return np.reciprocal(r)


rsqrt = op("rsqrt(Tensor self) -> Tensor", _rsqrt, promote="float",
           grads={"self": lambda grad, result: -0.5 * grad * pow_ts(result, 3)},
           array_grads={"self": lambda grad, result: np.multiply(
               np.multiply(grad, -0.5), _pow_tensor_scalar(result, 3))})

sin = op("sin(Tensor self) -> Tensor", np.sin, promote="float",
         grads={"self": lambda grad, self: grad * cos(self)})

cos = op("cos(Tensor self) -> Tensor", np.cos, promote="float",
         grads={"self": lambda grad, self: grad * -sin(self)})

tan = op("tan(Tensor self) -> Tensor", np.tan, promote="float",
         grads={"self": lambda grad, result: grad * (1 + result * result)})

def _tanh_backward(g, y):
    out = np.multiply(y, y)
    np.subtract(1, out, out=out)
    return np.multiply(g, out, out=out)


# tanh's and sigmoid's backward are ops of their own (as in torch): one Python op in backward
# instead of three, and differentiable again for double backward
tanh_backward = op("tanh_backward(Tensor grad_output, Tensor output) -> Tensor", _tanh_backward,
                   grads={"grad_output": lambda grad, output: tanh_backward(grad, output),
                          "output": lambda grad, grad_output, output:
                          grad * grad_output * output * -2},
                   function=False, method=False)

tanh = op("tanh(Tensor self) -> Tensor", np.tanh, promote="float",
          grads={"self": lambda grad, result: tanh_backward(grad, result)},
          array_grads={"self": lambda grad, result: _tanh_backward(grad, result)})


def _sigmoid(a):
    e = np.exp(np.negative(a))
    if type(e) is not np.ndarray:
        return np.asarray(1 / (1 + e), dtype=a.dtype)
    e += 1
    return np.reciprocal(e, out=e)


def _sigmoid_backward(g, y):
    out = np.subtract(1, y)
    np.multiply(out, y, out=out)
    return np.multiply(g, out, out=out)


sigmoid_backward = op("sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
                      _sigmoid_backward,
                      grads={"grad_output": lambda grad, output: sigmoid_backward(grad, output),
                             "output": lambda grad, grad_output, output:
                             grad * grad_output * (1 - 2 * output)},
                      function=False, method=False)

sigmoid = op("sigmoid(Tensor self) -> Tensor", _sigmoid, promote="float",
             grads={"self": lambda grad, result: sigmoid_backward(grad, result)},
             array_grads={"self": lambda grad, result: _sigmoid_backward(grad, result)})

reciprocal = op("reciprocal(Tensor self) -> Tensor", np.reciprocal, promote="float",
                grads={"self": lambda grad, result: -grad * (result * result)},
                array_grads={"self": lambda grad, result: np.multiply(
                    np.negative(grad), np.multiply(result, result))})


def _erf_series(x: np.ndarray) -> np.ndarray:
    """erf in float64 without SciPy: a positive-term series for |x| < 3, erfc's continued
    fraction beyond (both accurate to about 1e-16)."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    small = ax < 3.0
    xs = np.where(small, x, 0.0)
    x2 = xs * xs
    term = xs.copy()
    total = xs.copy()
    for n in range(1, 120):
        term = term * (2.0 * x2 / (2 * n + 1))
        total += term
        if not np.any(np.abs(term) > 1e-17 * np.abs(total)):
            break
    series = 2.0 / SQRT_PI * np.exp(-x2) * total
    xl = np.where(small, 3.0, ax)
    frac = xl.copy()
    for k in range(60, 0, -1):
        frac = xl + (k / 2.0) / frac
    erfc = np.exp(-xl * xl) / (SQRT_PI * frac)
    return np.where(small, series, np.sign(x) * (1.0 - erfc))


try:
    from scipy.special import erf as _scipy_erf
except ImportError:  # SciPy is optional
    _scipy_erf = None


# erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (beyond, erf rounds to +-1 in single precision): the
# rational approximation of Eigen's and XLA's float erf. Evaluated in float64 it is within 1.6
# ulp of the float32 result (checked on a dense grid in tests/test_pointwise_ops.py), and a
# few vectorized passes, where a per-element erf (SciPy's) costs 30x a NumPy exp.
_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02)
_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
          -7.37332916720468e-03, -1.42647390514189e-02)


_ERF_CHUNK = 32768  # float64 scratch of 256 KiB each: stays in cache, no fresh pages


def _erf_single(a: np.ndarray) -> np.ndarray:
    """erf of a single- or half-precision array, computed in float64 a chunk at a time and
    rounded once into a float32 array of the input's layout."""
    src = np.ravel(a)
    dst = np.empty(src.shape, np.float32)
    n = src.shape[0]
    m = min(_ERF_CHUNK, n)
    x, x2, p, q = (np.empty(m) for _ in range(4))
    for start in range(0, n, _ERF_CHUNK):
        k = min(start + _ERF_CHUNK, n) - start
        xs, x2s, ps, qs = x[:k], x2[:k], p[:k], q[:k]
        np.clip(src[start:start + k], -4.0, 4.0, out=xs)
        np.multiply(xs, xs, out=x2s)
        ps.fill(_ERF_P[0])
        for c in _ERF_P[1:]:
            ps *= x2s
            ps += c
        ps *= xs
        qs.fill(_ERF_Q[0])
        for c in _ERF_Q[1:]:
            qs *= x2s
            qs += c
        np.divide(ps, qs, out=dst[start:start + k])
    res = dst.reshape(a.shape)
    if a.ndim < 2 or a.flags.c_contiguous:
        return res
    out = np.empty_like(a, dtype=np.float32)  # keeps a transposed (or permuted) layout
    out[...] = res
    return out


def erf_array(a: np.ndarray) -> np.ndarray:
    """erf of a float array in its own dtype."""
    if a.dtype == np.float64:
        return _scipy_erf(a) if _scipy_erf is not None else _erf_series(a)
    out = _erf_single(np.asarray(a))  # float32
    return out if out.dtype == a.dtype else out.astype(a.dtype)


erf = op("erf(Tensor self) -> Tensor", erf_array, promote="float",
         grads={"self": lambda grad, self: grad * ((2.0 / SQRT_PI) * exp(-(self * self)))})


# --- rounding ------------------------------------------------------------------------------------

def _rounding(ufunc, kernel: str):
    def forward(a):
        if a.dtype.kind in "iub":
            _check_kind(a, kernel)
            return a.copy()  # integers are already whole; torch returns a copy
        return ufunc(a)

    return forward


_ZERO = {"self": lambda grad: zeros_like(grad)}

floor = op("floor(Tensor self) -> Tensor", _rounding(np.floor, "floor_vml_cpu"), grads=_ZERO)
ceil = op("ceil(Tensor self) -> Tensor", _rounding(np.ceil, "ceil_vml_cpu"), grads=_ZERO)
trunc = op("trunc(Tensor self) -> Tensor", _rounding(np.trunc, "trunc_vml_cpu"), grads=_ZERO)
register("fix", trunc, method=True)
_round = op("round(Tensor self) -> Tensor", _rounding(np.rint, "round_vml_cpu"), grads=_ZERO,
            function=False, method=False)


def _round_decimals_forward(a, decimals):
    if a.dtype.kind in "iub":
        raise not_implemented("round_cpu" if decimals else "round_vml_cpu", a.dtype)
    work = a if a.dtype.itemsize >= 4 else a.astype(np.float32)  # half types: float32 math
    scale = 10.0 ** (-decimals if decimals < 0 else decimals)
    out = np.rint(work * scale) / scale if decimals >= 0 else np.rint(work / scale) * scale
    return out.astype(a.dtype, copy=False)


_round_decimals = op("round.decimals(Tensor self, *, int decimals) -> Tensor",
                     _round_decimals_forward, node="RoundBackward1", grads=_ZERO,
                     function=False, method=False)


def round(input: Tensor, *, decimals=_UNSET) -> Tensor:  # noqa: A001 - torch's name
    # an explicit decimals, even 0, selects round.decimals (RoundBackward1) in torch
    if decimals is _UNSET:
        return _round(input)
    return _round_decimals(input, decimals=decimals)


register("round", round, method=True)


def _frac(a):
    _check_kind(a, "frac_cpu", "iub")
    return np.subtract(a, np.trunc(a))


frac = op("frac(Tensor self) -> Tensor", _frac, grads={"self": lambda grad: grad})


# --- lerp, addcmul, addcdiv ----------------------------------------------------------------------

def _cpp_name(np_dtype) -> str:
    from retrograd._dtype import CPP_NAMES, from_numpy_dtype

    name = from_numpy_dtype(np_dtype).name
    return CPP_NAMES.get(name, name)


def _check_same_dtype(a, b, name: str) -> None:
    if type(b) is np.ndarray and b.dtype != a.dtype:
        raise RuntimeError(LERP_DTYPE.format(_cpp_name(a.dtype), name, _cpp_name(b.dtype)))


def _lerp(a, end, weight):
    _check_same_dtype(a, end, "end")
    _check_same_dtype(a, weight, "weight")
    _check_kind(a, "lerp_kernel_scalar" if type(weight) is not np.ndarray
                else "lerp_kernel_tensor", "iub")
    if type(weight) is not np.ndarray and a.dtype.kind == "V":
        weight = a.dtype.type(weight)
    diff = np.subtract(end, a)
    # torch's two-sided form: exact at weight 0 and at weight 1
    low = np.less(np.abs(weight), 0.5)
    if type(weight) is not np.ndarray:
        return np.add(a, weight * diff) if low else np.subtract(end, diff * (1 - weight))
    return np.where(low, a + weight * diff, end - diff * (1 - weight))


lerp_s = op("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", pointwise(_lerp),
            node="LerpBackward0",
            grads={"self": lambda grad, weight: grad * (1 - weight),
                   "end": lambda grad, weight: grad * weight},
            function=False, method=False)
lerp_t = op("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", pointwise(_lerp),
            node="LerpBackward1",
            grads={"self": lambda grad, weight: grad * (1 - weight),
                   "end": lambda grad, weight: grad * weight,
                   "weight": lambda grad, self, end: grad * (end - self)},
            function=False, method=False)


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    return lerp_t(input, end, weight) if isinstance(weight, Tensor) else \
        lerp_s(input, end, weight)


register("lerp", lerp, method=True)


def _addcmul(a, t1, t2, value):
    _check_kind(a, "addcmul_cpu_out")
    prod = np.multiply(t1, t2)
    if value != 1:
        prod = np.multiply(prod, _value_for(prod, value))
    return np.add(a, prod)


def _value_for(arr, value):
    """The Scalar `value` in the computation dtype (torch truncates it for integer tensors)."""
    kind = arr.dtype.kind if hasattr(arr, "dtype") else "f"
    if kind == "V":
        return arr.dtype.type(value)
    if kind in "iu":
        return int(value)
    return value


def _addcdiv(a, t1, t2, value):
    # torch rejects integer tensor1 and tensor2 before promotion
    if _int_like(t1) and _int_like(t2):
        raise RuntimeError(ADDCDIV_INT)
    a, t1, t2 = promote_args((a, t1, t2), (0, 1, 2))
    q = np.true_divide(t1, t2)
    if value != 1:
        q = np.multiply(q, _value_for(q, value))
    return np.add(a, q)


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

def _clamp(a, lo, hi):
    if lo is None and hi is None:
        raise RuntimeError(CLAMP_NONE)
    if lo is not None:
        a = np.maximum(a, lo)
    if hi is not None:
        a = np.minimum(a, hi)
    return a


def _clamp_scalar(a, lo, hi):
    a, lo, hi = promote_args((a, lo, hi), (0, 1, 2))
    if a.dtype.kind == "b":
        kernel = "clamp_scalar_cpu" if lo is not None and hi is not None else \
            "clamp_min_scalar_cpu" if lo is not None else "clamp_max_scalar_cpu"
        raise not_implemented(kernel, a.dtype)
    return _clamp(a, lo, hi)


def _clamp_mask(self, min, max, ge, le, both):  # noqa: A002 - torch's argument names
    """Where clamp passed self through (None: everywhere), with the given comparison ops."""
    if min is not None and max is not None:
        return both(ge(self, min), le(self, max))
    if min is not None:
        return ge(self, min)
    if max is not None:
        return le(self, max)
    return None


def _clamp_grad(grad, self, min, max):  # noqa: A002 - torch's argument names
    mask = _clamp_mask(self, min, max, C.ge, C.le, C.logical_and)
    return grad if mask is None else where(mask, grad, 0.0)


def _clamp_grad_array(grad, self, min, max):  # noqa: A002 - torch's argument names
    """_clamp_grad on arrays (NOTE [Array formulas])."""
    mask = _clamp_mask(self, min, max, np.greater_equal, np.less_equal, np.logical_and)
    return grad if mask is None else _masked(grad, mask)


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


clamp_s = op("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", _clamp_scalar,
             node="ClampBackward1", grads={"self": _clamp_grad},
             array_grads={"self": lambda grad, self, min, max: _clamp_grad_array(
                 grad, self, min, max)},
             function=False, method=False)
clamp_t = op("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
             pointwise(promoting(_clamp, (0, 1, 2))), node="ClampBackward0",
             grads={"self": _clamp_grad, "min, max": _clamp_min_max_grad},
             function=False, method=False)


def clamp(input: Tensor, min=None, max=None) -> Tensor:  # noqa: A002 - torch's names
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return clamp_t(input, min, max)
    return clamp_s(input, min, max)


register("clamp", clamp, method=True)
register("clip", clamp, method=True)

clamp_min_s = op("clamp_min(Tensor self, Scalar min) -> Tensor",
                 lambda a, lo: _clamp_scalar(a, lo, None), node="ClampMinBackward0",
                 grads={"self": lambda grad, self, min: where(C.ge(self, min), grad, 0.0)},
                 function=False, method=False)
clamp_min_t = op("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor",
                 binary(promoting(np.maximum, (0, 1))), node="ClampMinBackward1",
                 grads={"self": lambda grad, self, min: where(C.ge(self, min), grad, 0.0),
                        "min": lambda grad, self, min: where(C.lt(self, min), grad, 0.0)},
                 function=False, method=False)
clamp_max_s = op("clamp_max(Tensor self, Scalar max) -> Tensor",
                 lambda a, hi: _clamp_scalar(a, None, hi), node="ClampMaxBackward0",
                 grads={"self": lambda grad, self, max: where(C.le(self, max), grad, 0.0)},
                 function=False, method=False)
clamp_max_t = op("clamp_max.Tensor(Tensor self, Tensor max) -> Tensor",
                 binary(promoting(np.minimum, (0, 1))), node="ClampMaxBackward1",
                 grads={"self": lambda grad, self, max: where(C.le(self, max), grad, 0.0),
                        "max": lambda grad, self, max: where(C.gt(self, max), grad, 0.0)},
                 function=False, method=False)


def clamp_min(input: Tensor, min) -> Tensor:  # noqa: A002
    return clamp_min_t(input, min) if isinstance(min, Tensor) else clamp_min_s(input, min)


def clamp_max(input: Tensor, max) -> Tensor:  # noqa: A002
    return clamp_max_t(input, max) if isinstance(max, Tensor) else clamp_max_s(input, max)


register("clamp_min", clamp_min, method=True)
register("clamp_max", clamp_max, method=True)


def _where(condition, a, b):
    if condition.dtype.kind != "b":
        from retrograd._ops.layout import type_name

        raise RuntimeError(WHERE_COND.format(type_name(condition.dtype)))
    a, b = promote_args((a, b), (0, 1))
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        # np.where does not treat Python scalars as weak: give both the result dtype
        target = a.dtype if type(a) is np.ndarray else b.dtype if type(b) is np.ndarray \
            else result_dtype((a, b)).np
        a, b = np.asarray(a, dtype=target), np.asarray(b, dtype=target)
    return np.where(condition, a, b)


_where_op = op("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
               pointwise(_where),
               grads={"self": lambda grad, condition: where(condition, grad, 0.0),
                      "other": lambda grad, condition: where(condition, 0.0, grad)},
               array_grads={"self": lambda grad, condition: _masked(grad, condition),
                            "other": lambda grad, condition: _masked(
                                grad, np.logical_not(condition))},
               function=False, method=False)


def where(condition: Tensor, input=None, other=None, *, out=None):
    """torch.where(condition, input, other); torch.where(condition) is nonzero(as_tuple=True)."""
    if input is None and other is None:
        from retrograd._tensor import _wrap

        return tuple(_wrap(i.astype(np.int64, copy=False))
                     for i in np.nonzero(np.asarray(condition._data)))
    return _where_op(condition, input, other, out=out)


register("where", where)
register_method("where", lambda self, condition, other: _where_op(condition, self, other))


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

def _direct_binary(ufunc):
    def direct(dst, other, *rest):
        ufunc(dst, other, out=dst)

    return direct


def _direct_add(ufunc):
    def direct(dst, other, alpha):
        if ufunc is np.subtract and type(other) is bool:
            _check_sub(dst, other)
        if type(alpha) is bool:
            raise ValueError  # the general path checks alpha and raises torch's error
        if alpha != 1:
            other = np.multiply(other, alpha)
        ufunc(dst, other, out=dst)

    return direct


def _direct_unary(ufunc):
    def direct(dst):
        ufunc(dst, out=dst)

    return direct


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
def _lerp_direct(dst, end, weight):
    """dst.lerp_(end, w) for a float scalar weight, written in place (optimizers' hot path)."""
    diff = np.subtract(end, dst)
    if -0.5 < weight < 0.5:
        diff *= weight
        np.add(dst, diff, out=dst)
    else:
        diff *= 1 - weight
        np.subtract(end, diff, out=dst)


lerp_s_ = inplace_of(lerp_s, name="lerp_", direct=_lerp_direct)
lerp_t_ = inplace_of(lerp_t, name="lerp_")
def _check_clamp_cast(dst, *bounds) -> None:
    """Scalar clamp_ checks the cast itself, naming the output type as C++ does."""
    target = result_dtype((dst,) + bounds).np
    if target != dst.dtype and (target.kind in "fV" and dst.dtype.kind in "iub"
                                or target.kind in "iu" and dst.dtype.kind == "b"):
        from retrograd._ops.layout import CAST_ERROR, type_name

        raise RuntimeError(CAST_ERROR.format(type_name(target), _cpp_name(dst.dtype)))


clamp_s_ = inplace_of(clamp_s, name="clamp_", check=_check_clamp_cast)
clamp_t_ = inplace_of(clamp_t, name="clamp_")
clamp_min_s_ = inplace_of(clamp_min_s, name="clamp_min_", check=_check_clamp_cast)
clamp_min_t_ = inplace_of(clamp_min_t, name="clamp_min_")
clamp_max_s_ = inplace_of(clamp_max_s, name="clamp_max_", check=_check_clamp_cast)
clamp_max_t_ = inplace_of(clamp_max_t, name="clamp_max_")
round_ = inplace_of(_round, name="round_")
round_decimals_ = inplace_of(_round_decimals, name="round_")


def _addc_direct(ufunc):
    def direct(dst, t1, t2, value):
        q = ufunc(t1, t2)
        if value != 1:
            q *= value
        np.add(dst, q, out=dst)

    return direct


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


def _dispatch_inplace(tensor_op, scalar_op):
    def method(self, other):
        return tensor_op(self, other) if isinstance(other, Tensor) else scalar_op(self, other)

    return method


def _div_(self: Tensor, other, *, rounding_mode=_UNSET) -> Tensor:
    if rounding_mode is _UNSET:
        return div_t_(self, other)
    _check_mode(rounding_mode)
    return div_mode_(self, other, rounding_mode=rounding_mode)


register_method("div_", _div_)
register_method("divide_", _div_)
register_method("true_divide_", div_t_)
register_method("remainder_", _dispatch_inplace(remainder_t_, remainder_s_))
register_method("fmod_", _dispatch_inplace(fmod_t_, fmod_s_))
register_method("pow_", _dispatch_inplace(pow_tt_, pow_ts_))
register_method("square_", lambda self: pow_ts_(self, 2))
register_method("lerp_", lambda self, end, weight: lerp_t_(self, end, weight)
                if isinstance(weight, Tensor) else lerp_s_(self, end, weight))
register_method("round_", lambda self, *, decimals=_UNSET: round_(self) if decimals is _UNSET
                else round_decimals_(self, decimals=decimals))


def _clamp_(self: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return clamp_t_(self, min, max)
    return clamp_s_(self, min, max)


register_method("clamp_", _clamp_)
register_method("clip_", _clamp_)
register_method("clamp_min_", _dispatch_inplace(clamp_min_t_, clamp_min_s_))
register_method("clamp_max_", _dispatch_inplace(clamp_max_t_, clamp_max_s_))


# --- zero_, fill_ -------------------------------------------------------------------------------

def _fill(dst, value):
    if type(value) is np.ndarray:
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions.")
    dst[...] = value


zero_ = op("zero_(Tensor(a!) self) -> Tensor(a!)", lambda dst: dst.fill(0),
           grads={"self": lambda grad: zeros_like(grad)}, function=False)
fill_s_ = op("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", _fill,
             node="FillBackward2", grads={"self": lambda grad: zeros_like(grad)},
             function=False, method=False)
fill_t_ = op("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", _fill,
             node="FillBackward3", grads={"self": lambda grad: zeros_like(grad),
                                          "value": lambda grad: grad.sum()},
             function=False, method=False)
register_method("fill_", lambda self, value: fill_t_(self, value) if isinstance(value, Tensor)
                else fill_s_(self, value))
register("fill_", lambda input, value: fill_t_(input, value) if isinstance(value, Tensor)
         else fill_s_(input, value))
register("zero_", zero_)


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


def _ipow(self: Tensor, other) -> Tensor:
    return pow_tt_(self, other) if isinstance(other, Tensor) else pow_ts_(self, other)


def _imod(self: Tensor, other) -> Tensor:
    return remainder_t_(self, other) if isinstance(other, Tensor) else remainder_s_(self, other)


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
Tensor.__ifloordiv__ = floor_divide_
Tensor.__imod__ = _imod
Tensor.__ipow__ = _ipow
# operators.install() (run later) sets __rtruediv__ as a true division; methods registered
# here are installed after it, so torch's reciprocal-then-multiply form wins
register_method("__rtruediv__", _rtruediv)
register_method("__rdiv__", _rtruediv)
