"""NumPy kernels of hardshrink and softshrink and of their backward (the band mask).

retrograd._ops.shrink declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.layout import not_implemented

# torch prints a dtype's largest value as C++'s default stream does (6 significant digits)
_DTYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                "bfloat16": "BFloat16"}


def _cpp_number(value: float) -> str:
    text = f"{value:.6g}"
    return text.replace("e+0", "e+").replace("e-0", "e-")


def _check_float(kernel: str, a: np.ndarray) -> None:
    if a.dtype.kind not in "fV":
        raise not_implemented(kernel, a.dtype)


def _in_band(a: np.ndarray, lambd) -> np.ndarray:
    """Where -lambd <= a <= lambd (NaN is outside: it passes through)."""
    return (a >= -lambd) & (a <= lambd)


def hardshrink_kernel(a: np.ndarray, lambd) -> np.ndarray:
    _check_float("hardshrink_cpu", a)
    lambd = float(lambd)
    return np.where(_in_band(a, lambd), a.dtype.type(0), a)


def _check_softshrink_lambda(a: np.ndarray, lambd: float) -> None:
    top = float(np.finfo(a.dtype).max) if a.dtype.kind == "f" else 3.3895313892515355e38
    if not 0 <= lambd <= top:
        name = _DTYPE_NAMES.get(a.dtype.name, a.dtype.name)
        raise RuntimeError(f"lambda must be in range [0, {_cpp_number(top)}] for input dtype "
                           f"{name}, but found {_cpp_number(lambd)}")


def softshrink_kernel(a: np.ndarray, lambd) -> np.ndarray:
    _check_float("softshrink_check", a)
    lambd = float(lambd)
    _check_softshrink_lambda(a, lambd)
    # inside the band torch writes a * 0: a signed zero, as the input's sign
    shifted = np.where(a > lambd, a - a.dtype.type(lambd), a + a.dtype.type(lambd))
    return np.where(_in_band(a, lambd), a * a.dtype.type(0), shifted)


def shrink_backward_kernel(grad: np.ndarray, a: np.ndarray, lambd) -> np.ndarray:
    """The gradient of both shrinks: grad outside the band, zero inside."""
    return np.where(_in_band(a, float(lambd)), grad.dtype.type(0), grad)
