"""Activation functions: relu, gelu, silu, softplus, elu, ... and their in-place forms.

Each is exposed as retrograd.nn.functional.<name> (with torch's `inplace=` flag where torch has
one) and, where torch has it, as retrograd.<name> and a Tensor method. Gradients are written with
retrograd ops, so double backward works. Half-precision inputs are computed in float32 and
rounded back, as torch's CPU kernels do.

The NumPy kernels the declarations run are in kernels/activation.py.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._ops import comparison as C
from retrograd._ops import pointwise as P
from retrograd._ops import shape as S
from retrograd._ops.kernels.activation import (
    _check_approximate,
    _elu,
    _float_only,
    _hardsigmoid,
    _hardswish,
    _hardtanh,
    _leaky_relu,
    _log_sigmoid,
    _mish,
    _relu,
    _relu_direct,
    _softplus,
    _threshold,
    _threshold_backward,
)
from retrograd._ops.layout import (
    inplace_forward,
    inplace_of,
    label_entry_points,
    not_implemented,
)
from retrograd._ops.registry import op, register, register_functional, register_method
from retrograd._tensor import Tensor

SQRT1_2 = math.sqrt(0.5)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
GELU_K = math.sqrt(2.0 / math.pi)
GELU_C = 0.044715
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


# --- relu -------------------------------------------------------------------------------------


# relu's backward as one op (torch's threshold_backward); its own gradient masks again
threshold_backward = op(
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    _threshold_backward,
    grads={"grad_output": lambda grad, self, threshold: threshold_backward(grad, self, threshold),
           "self": lambda grad, self: P.mul(grad, 0.0)},
    function=False, method=False)


def _relu_grad(grad, result):
    return threshold_backward(grad, result, 0)


relu = op("relu(Tensor self) -> Tensor", _relu, grads={"self": _relu_grad})


relu_ = inplace_of(relu, function=True, direct=_relu_direct)


threshold = op("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", _threshold,
               grads={"self": lambda grad, self, threshold:
                      threshold_backward(grad, self, threshold)})
threshold_ = inplace_of(threshold, function=True, node="ThresholdBackward1")


def _f_threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return threshold_(input, threshold, value) if inplace else globals()["threshold"](
        input, threshold, value)


# --- gelu -------------------------------------------------------------------------------------

def _gelu(a, approximate):
    if approximate == "tanh":
        inner = GELU_K * (a + GELU_C * a * a * a)
        return 0.5 * a * (1 + np.tanh(inner))
    # a * 0.5 * (1 + erf(a / sqrt(2))) in torch's order, in place on fresh arrays (the
    # result keeps a's layout)
    out = np.asarray(np.multiply(a, 0.5))
    e = np.asarray(P.erf_array(np.multiply(a, SQRT1_2)))
    e += 1
    out *= e
    return out


def _gelu_grad(grad, self, approximate):
    x = self
    if approximate == "tanh":
        x2 = x * x
        t = P.tanh(GELU_K * (x + GELU_C * x2 * x))
        left = 0.5 * x
        right = 1 + t
        d_right = left * (1 - t * t) * (GELU_K * (1 + 3 * GELU_C * x2))
        return grad * (0.5 * right + d_right)
    cdf = 0.5 * (1 + P.erf(x * SQRT1_2))
    pdf = INV_SQRT_2PI * P.exp(-0.5 * (x * x))
    return grad * (cdf + x * pdf)


def _gelu_grad_array(grad, self, approximate):
    """_gelu_grad on arrays, in place on fresh arrays (NOTE [Array formulas]); 16-bit floats
    are computed in float32, as the forward is."""
    x = self
    if x.dtype.itemsize < 4:
        f32 = np.float32
        return _gelu_grad_array(grad.astype(f32), x.astype(f32), approximate).astype(x.dtype)
    x2 = np.asarray(np.multiply(x, x))
    if approximate == "tanh":
        t = np.asarray(np.tanh(GELU_K * (x + GELU_C * x2 * x)))
        # 0.5 * (1 + t) + 0.5 * x * (1 - t^2) * K * (1 + 3 C x^2)
        x2 *= 3 * GELU_C
        x2 += 1
        x2 *= GELU_K * 0.5
        x2 *= x
        x2 *= 1 - t * t
        t += 1
        t *= 0.5
        t += x2
        t *= grad
        return t
    # cdf + x * pdf, pdf = exp(-x^2 / 2) / sqrt(2 pi)
    x2 *= -0.5
    np.exp(x2, out=x2)
    x2 *= INV_SQRT_2PI
    x2 *= x
    cdf = np.asarray(P.erf_array(np.multiply(x, SQRT1_2)))
    cdf += 1
    cdf *= 0.5
    cdf += x2
    cdf *= grad
    return cdf


_gelu_op = op("gelu(Tensor self, *, str approximate='none') -> Tensor",
              _float_only("GeluKernelImpl", _gelu), grads={"self": _gelu_grad},
              array_grads={"self": _gelu_grad_array},
              function=False, method=False)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    _check_approximate(approximate)
    return _gelu_op(input, approximate=approximate)


# --- silu, mish, softplus, logsigmoid ---------------------------------------------------------

def _silu(a):
    return a * P._sigmoid(a)


def _silu_grad(grad, self):
    s = P.sigmoid(self)
    return grad * (s * (1 + self * (1 - s)))


silu = op("silu(Tensor self) -> Tensor", _float_only("silu_cpu", _silu),
          grads={"self": _silu_grad}, function=False, method=False)
silu_ = inplace_of(silu, function=False)


def _softplus_grad(grad, self, beta, threshold):
    bx = self * beta
    return P.where(C.gt(bx, threshold), grad, grad * P.sigmoid(bx))


softplus = op("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
              _float_only("softplus_cpu", _softplus), grads={"self": _softplus_grad},
              function=False, method=False)


def _mish_grad(grad, self):
    t = P.tanh(softplus(self))
    s = P.sigmoid(self)
    return grad * (t + self * s * (1 - t * t))


mish = op("mish(Tensor self) -> Tensor", _float_only("mish_cpu", _mish),
          grads={"self": _mish_grad}, function=False, method=False)
mish_ = inplace_of(mish, function=False)


log_sigmoid = op("log_sigmoid(Tensor self) -> Tensor", _float_only("log_sigmoid_cpu",
                                                                   _log_sigmoid),
                 grads={"self": lambda grad, self: grad * P.sigmoid(-self)},
                 function=False, method=False)


# --- elu family -------------------------------------------------------------------------------


def _elu_grad(grad, self, alpha, scale, input_scale):
    neg = grad * (input_scale * alpha * scale) * P.exp(self * input_scale)
    return P.where(C.le(self, 0), neg, grad * scale)


def _elu_result_grad(grad, result, alpha, scale, input_scale):
    # from the output: for x <= 0, d/dx = input_scale * (result + alpha * scale)
    neg = grad * input_scale * (result + alpha * scale)
    return P.where(C.le(result, 0), neg, grad * scale)


_ELU_ARGS = "Scalar alpha=1, Scalar scale=1, Scalar input_scale=1"
elu_op = op(f"elu(Tensor self, {_ELU_ARGS}) -> Tensor", _float_only("elu_cpu", _elu),
            grads={"self": _elu_grad}, function=False, method=False)
elu_op_ = op(f"elu_(Tensor(a!) self, {_ELU_ARGS}) -> Tensor(a!)",
             inplace_forward(_float_only("elu_cpu", _elu)), node="EluBackward1",
             grads={"self": _elu_result_grad}, function=False, method=False)


leaky_relu_op = op("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
                   _float_only("leaky_relu_cpu", _leaky_relu),
                   grads={"self": lambda grad, self, negative_slope:
                          P.where(C.gt(self, 0), grad, grad * negative_slope)},
                   function=False, method=False)
leaky_relu_op_ = op("leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)",
                    inplace_forward(_float_only("leaky_relu_cpu", _leaky_relu)),
                    node="LeakyReluBackward1",
                    grads={"self": lambda grad, result, negative_slope:
                           P.where(C.gt(result, 0), grad, grad * negative_slope)},
                    function=False, method=False)


def _hardtanh_grad(grad, self, min_val, max_val):
    outside = C.logical_or(C.le(self, min_val), C.ge(self, max_val))
    return P.where(outside, 0.0, grad)


hardtanh_op = op("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
                 _hardtanh, grads={"self": _hardtanh_grad}, function=False, method=False)
hardtanh_op_ = inplace_of(hardtanh_op)


def _hardsigmoid_grad(grad, self):
    inside = C.logical_and(C.gt(self, -3.0), C.lt(self, 3.0))
    return P.where(inside, grad / 6, 0.0)


hardsigmoid = op("hardsigmoid(Tensor self) -> Tensor",
                 _float_only("hardsigmoid_cpu", _hardsigmoid),
                 grads={"self": _hardsigmoid_grad}, function=False, method=False)
hardsigmoid_ = inplace_of(hardsigmoid)


def _hardswish_grad(grad, self):
    middle = P.where(C.lt(self, 3.0), grad * (self / 3 + 0.5), grad)
    return P.where(C.le(self, -3.0), 0.0, middle)


hardswish = op("hardswish(Tensor self) -> Tensor", _float_only("hardswish_cpu", _hardswish),
               grads={"self": _hardswish_grad}, function=False, method=False)
hardswish_ = inplace_of(hardswish)


# --- the functional API -------------------------------------------------------------------------

def _f_relu(input: Tensor, inplace: bool = False) -> Tensor:
    return relu_(input) if inplace else relu(input)


def _f_silu(input: Tensor, inplace: bool = False) -> Tensor:
    return silu_(input) if inplace else silu(input)


def _f_softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return softplus(input, beta, threshold)


def _f_elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return elu_op_(input, alpha) if inplace else elu_op(input, alpha)


def _f_elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu_op_(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    f = elu_op_ if inplace else elu_op
    return f(input, SELU_ALPHA, SELU_SCALE)


def selu_(input: Tensor) -> Tensor:
    return elu_op_(input, SELU_ALPHA, SELU_SCALE)


def _f_leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    f = leaky_relu_op_ if inplace else leaky_relu_op
    return f(input, negative_slope)


def _f_leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu_op_(input, negative_slope)


def _f_hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
                inplace: bool = False) -> Tensor:
    f = hardtanh_op_ if inplace else hardtanh_op
    return f(input, min_val, max_val)


def _f_hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh_op_(input, min_val, max_val)


def _f_relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _f_hardtanh(input, 0.0, 6.0, inplace)


def _f_mish(input: Tensor, inplace: bool = False) -> Tensor:
    return mish_(input) if inplace else mish(input)


def _f_hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return hardsigmoid_(input) if inplace else hardsigmoid(input)


def _f_hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return hardswish_(input) if inplace else hardswish(input)


def _f_gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return gelu(input, approximate)


# --- glu ----------------------------------------------------------------------------------------


def _glu_forward(a, dim):
    if a.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = S.wrap_dim(dim, a.ndim)
    if a.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{a.shape[d]}")
    if a.dtype.kind not in "fV":
        raise not_implemented("glu_cpu", a.dtype)
    # 16-bit floats in float32, rounded once, as torch's kernel computes them
    wide = a.astype(np.float32) if a.dtype.itemsize <= 2 else a
    first, second = np.split(wide, 2, axis=d)
    return (first * P._sigmoid(second)).astype(a.dtype, copy=False)


def _glu_backward(grad, self, dim):
    """d/da (a * s(b)) = s(b); d/db = a * s(b) * (1 - s(b))."""
    first, second = self.chunk(2, dim)
    gate = P.sigmoid(second)
    grad_first = grad * gate
    return S.cat([grad_first, grad_first * first * (1 - gate)], dim)


glu = op("glu(Tensor self, int dim=-1) -> Tensor", _glu_forward, grads={"self": _glu_backward},
         function=False, method=False)


def _f_glu(input: Tensor, dim: int = -1) -> Tensor:
    """F.glu: torch writes it in Python around the op, so it takes torch's argument names only
    (NOTE [NumPy argument names])."""
    return glu(input, dim)


_FUNCTIONAL_NAMES = {
    "relu": _f_relu, "relu_": relu_, "gelu": _f_gelu, "silu": _f_silu,
    "softplus": _f_softplus, "elu": _f_elu, "elu_": _f_elu_, "leaky_relu": _f_leaky_relu,
    "leaky_relu_": _f_leaky_relu_, "hardtanh": _f_hardtanh, "hardtanh_": _f_hardtanh_,
    "relu6": _f_relu6, "selu": selu, "selu_": selu_, "mish": _f_mish,
    "hardsigmoid": _f_hardsigmoid, "hardswish": _f_hardswish, "logsigmoid": log_sigmoid,
    "sigmoid": P.sigmoid, "tanh": P.tanh, "glu": _f_glu, "threshold": _f_threshold,
    "threshold_": threshold_,
}
for _name, _fn in _FUNCTIONAL_NAMES.items():
    register_functional(_name, _fn)

register("selu", lambda input: elu_op(input, SELU_ALPHA, SELU_SCALE))
register("selu_", selu_)
register_method("relu", relu)
register_method("relu_", relu_)


def _label_family_entry_points() -> None:
    from retrograd._ops import comparison, pointwise, registry

    fns = list(registry._NAMESPACE.values()) + list(registry._METHODS.values())
    for mod in (pointwise, comparison, globals()):
        space = mod if isinstance(mod, dict) else vars(mod)
        fns.extend(v for v in space.values() if hasattr(v, "opdef"))
    label_entry_points(fns)


_label_family_entry_points()  # the last module of the family: every op is declared
