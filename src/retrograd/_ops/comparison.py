"""Comparisons, logical and bitwise ops, and value tests (isnan, isclose, ...).

None of these is differentiable: outputs are bool (or integer) tensors without history. The
in-place comparisons (`x.lt_(0)`) keep torch's nodes, whose gradients are zero.

The NumPy kernels the declarations run are in kernels/comparison.py.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.creation import as_tensor, zeros_like
from retrograd._ops.kernels.comparison import (
    _bitwise,
    _bitwise_not,
    _float_test,
    _isclose,
)
from retrograd._ops.layout import (
    binary,
    inplace_forward,
    promote_args,
)
from retrograd._ops.overloads import overloaded
from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor, _wrap

INVERT_FLOAT = "~ (operator.invert) is only implemented on integer and Boolean-type tensors"

# --- comparisons ---------------------------------------------------------------------------------

_COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                "gt": np.greater, "ge": np.greater_equal}
_ALIASES = {"ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
            "ge": "greater_equal"}
_OPERATORS = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__",
              "ge": "__ge__"}


def _zero_grad(grad):
    return zeros_like(grad)


def _zero_grad_other(grad, other_dtype):
    return zeros_like(grad, dtype=other_dtype)


def _comparison_inplace(name: str, fwd, fn) -> None:
    """x.lt_(y): the comparison written into x's dtype; node LtBackward0 (Scalar) / 1 (Tensor)."""
    node = name.title()
    write = inplace_forward(fwd, "all", (0, 1), bool_result=True)
    op(f"{name}_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", write,
       node=f"{node}Backward0", grads={"self": _zero_grad}, function=False)
    op(f"{name}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", write,
       node=f"{node}Backward1", grads={"self": _zero_grad, "other": _zero_grad_other},
       function=False)
    if name in _ALIASES:
        register_method(_ALIASES[name] + "_", overloaded(f"{name}_", method=True))


_COMPARABLE = (Tensor, int, float, bool, np.number, np.bool_)


def _operator(fn, arrays: bool):
    """A comparison operator: anything but tensors and numbers is NotImplemented, as in torch
    (so `x == None` is False and `x < None` raises TypeError). `==` and `!=` compare with a
    NumPy array as with the tensor it converts to (torch's `==` does; its `!=` falls back on
    Python's identity test and says True whatever the values: NOTE [Array operands])."""

    def method(self, other):
        if isinstance(other, _COMPARABLE):
            return fn(self, other)
        if arrays and type(other) is np.ndarray:
            return fn(self, as_tensor(other))
        return NotImplemented

    return method


for _name, _ufunc in _COMPARISONS.items():
    _fwd = binary(_ufunc, bool_out=True)
    _fn = op(f"{_name}.Tensor(Tensor self, Tensor other) -> Tensor", _fwd, promote="all")
    globals()[_name] = _fn
    if _name in _ALIASES:
        register(_ALIASES[_name], _fn, method=True)
    setattr(Tensor, _OPERATORS[_name], _operator(_fn, _name in ("eq", "ne")))
    _comparison_inplace(_name, _fwd, _fn)


# --- logical ------------------------------------------------------------------------------------

for _name, _ufunc in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                      ("logical_xor", np.logical_xor)):
    _fwd = binary(_ufunc, bool_out=True)
    globals()[_name] = op(f"{_name}(Tensor self, Tensor other) -> Tensor", _fwd)
    # in-place logical ops have no derivative in torch: the tensor keeps its history
    op(f"{_name}_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       inplace_forward(_fwd, None, (0, 1)),
       function=False)

logical_not = op("logical_not(Tensor self) -> Tensor", np.logical_not)
op("logical_not_(Tensor(a!) self) -> Tensor(a!)", inplace_forward(np.logical_not),
   function=False)


# --- bitwise ------------------------------------------------------------------------------------


_BITWISE = (("bitwise_and", np.bitwise_and, "bitwise_and_cpu", "__and__"),
            ("bitwise_or", np.bitwise_or, "bitwise_or_cpu", "__or__"),
            ("bitwise_xor", np.bitwise_xor, "bitwise_xor_cpu", "__xor__"),
            ("bitwise_left_shift", np.left_shift, "lshift_cpu", "__lshift__"),
            ("bitwise_right_shift", np.right_shift, "rshift_cpu", "__rshift__"))

for _name, _ufunc, _kernel, _dunder in _BITWISE:
    _fwd = _bitwise(_ufunc, _kernel)
    _fn = op(f"{_name}.Tensor(Tensor self, Tensor other) -> Tensor", _fwd, promote="all")
    globals()[_name] = _fn
    _ip = op(f"{_name}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
             inplace_forward(_fwd, "all", (0, 1)), function=False)
    setattr(Tensor, _dunder, _fn)
    setattr(Tensor, "__r" + _dunder[2:], (lambda f: lambda self, other: f(
        _scalar_tensor(other), self))(_fn))
    setattr(Tensor, "__i" + _dunder[2:], _ip)


def _scalar_tensor(value) -> Tensor:
    """A Python number as torch wraps it when it is the left operand (a 0-d tensor)."""
    if isinstance(value, Tensor):
        return value
    d = D.scalar_dtype(value)
    return _wrap(np.asarray(value, dtype=d.np))


bitwise_not = op("bitwise_not(Tensor self) -> Tensor", _bitwise_not)
op("bitwise_not_(Tensor(a!) self) -> Tensor(a!)", inplace_forward(_bitwise_not), function=False)


def _invert(self: Tensor) -> Tensor:
    if self._data.dtype.kind in "fV":
        raise TypeError(INVERT_FLOAT)
    return bitwise_not(self)


Tensor.__invert__ = _invert


# --- value tests ----------------------------------------------------------------------------------


isnan = op("isnan(Tensor self) -> Tensor", _float_test(np.isnan, False))
isinf = op("isinf(Tensor self) -> Tensor", _float_test(np.isinf, False))
isfinite = op("isfinite(Tensor self) -> Tensor", _float_test(np.isfinite, True))
isposinf = op("isposinf(Tensor self) -> Tensor", _float_test(np.isposinf, False))
isneginf = op("isneginf(Tensor self) -> Tensor", _float_test(np.isneginf, False))
signbit = op("signbit(Tensor self) -> Tensor",
             lambda a: np.signbit(a) if a.dtype.kind != "b" else np.zeros(a.shape, bool))
isreal = op("isreal(Tensor self) -> Tensor", lambda a: np.ones(a.shape, bool))


isclose = op("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
             "bool equal_nan=False) -> Tensor", _isclose)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """True if both tensors have the same shape and elements (compared after promotion)."""
    a, b = input._data, other._data
    if a.shape != b.shape:
        return False
    a, b = promote_args((a, b), (0, 1))
    return bool(np.array_equal(a, b))


register("allclose", allclose, method=True)
register("equal", equal, method=True)
