"""mul.Scalar and div.Scalar: torch's overloads for a tensor and a number, with their own nodes
(MulBackward1, DivBackward1). The public mul / div take numbers through mul.Tensor and
div.Tensor, as torch's Python bindings do; these are reached by torch's C++ composites
(trapezoid's last step, ...) and as retrograd.ops.aten.mul.Scalar."""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.pointwise import _np_div, _np_mul
from retrograd._ops.registry import op


def _weak(a: np.ndarray, other, to_float: bool) -> np.ndarray:
    # a number never raises a tensor's category except integer -> float, which gives the
    # default float dtype (torch's wrapped-number promotion)
    if a.dtype.kind in "biu" and (to_float or isinstance(other, float)):
        return a.astype(D.get_default_dtype().np)
    return a


def _mul_forward(a: np.ndarray, other) -> np.ndarray:
    b = _weak(a, other, False)
    if b.dtype.kind == "b" and isinstance(other, int) and not isinstance(other, bool):
        b = b.astype(np.int64)  # bool times an int counts in int64
    return _np_mul(b, other).astype(b.dtype, copy=False)


def _div_forward(a: np.ndarray, other) -> np.ndarray:
    b = _weak(a, other, True)
    return _np_div(b, other).astype(b.dtype, copy=False)


mul_scalar = op("mul.Scalar(Tensor self, Scalar other) -> Tensor", _mul_forward,
                grads={"self": lambda grad, other: grad * other}, node="MulBackward1",
                function=False, method=False)
div_scalar = op("div.Scalar(Tensor self, Scalar other) -> Tensor", _div_forward,
                grads={"self": lambda grad, other: grad / other}, node="DivBackward1",
                function=False, method=False)
