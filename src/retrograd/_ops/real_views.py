"""What torch's complex-number API does on real tensors: real is the tensor itself, imag is an
error, conj / resolve_conj / resolve_neg / conj_physical return the tensor, conj_physical_ changes
nothing but its version, the conjugate and negative bits are never set, and angle is 0 or pi
(AngleBackward0, a zero gradient)."""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd._ops.creation import zeros_like
from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor

IMAG_REAL = "imag is not implemented for tensors with non-complex dtypes."


def _tensor_arg(fn: str, value: Any) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")


def _identity(name: str):
    # on a real tensor these change nothing, and torch hands back the same object
    def fn(input: Tensor) -> Tensor:
        _tensor_arg(name, input)
        return input

    fn.__name__ = fn.__qualname__ = name
    return fn


real = _identity("real")
conj = _identity("conj")
resolve_conj = _identity("resolve_conj")
resolve_neg = _identity("resolve_neg")
conj_physical = _identity("conj_physical")
# in place it is still an in-place op to autograd, as torch's (version bump, the leaf check,
# history rebased onto ConjPhysicalBackward1), though it writes nothing on a real tensor
conj_physical_ = op("conj_physical_(Tensor(a!) self) -> Tensor(a!)", lambda dst: None,
                    node="ConjPhysicalBackward1", grads={"self": lambda grad: grad})


def imag(input: Tensor) -> Tensor:
    _tensor_arg("imag", input)
    raise RuntimeError(IMAG_REAL)


def is_conj(input: Tensor) -> bool:
    _tensor_arg("is_conj", input)
    return False


def is_neg(input: Tensor) -> bool:
    _tensor_arg("is_neg", input)
    return False


def _angle_forward(a: np.ndarray) -> np.ndarray:
    # the argument of a real number: pi below zero, 0 otherwise (-0.0 too), NaN kept
    out = np.where(a < 0, np.pi, 0.0).astype(a.dtype)
    return np.where(np.isnan(a), a, out)


angle = op("angle(Tensor self) -> Tensor", _angle_forward, promote="float",
           grads={"self": lambda grad: zeros_like(grad)})

for _f in (real, conj, resolve_conj, resolve_neg, conj_physical, imag, is_conj, is_neg):
    register(_f.__name__, _f, method=_f.__name__ not in ("real", "imag"))
# attributes on Tensor, as torch's
register_method("real", property(real))  # type: ignore[arg-type]
register_method("imag", property(imag))  # type: ignore[arg-type]
