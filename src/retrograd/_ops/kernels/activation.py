"""NumPy kernels of activations: relu/threshold, softplus, mish, log_sigmoid, elu, leaky_relu,
hardtanh, hardsigmoid, hardswish, with torch's dtype checks and messages.
retrograd._ops.activation declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.layout import not_implemented

RELU_BOOL = "Boolean inputs not supported for relu"


GELU_APPROX = "approximate argument must be either none or tanh."


HARDTANH_BOOL = "Bool inputs not supported for hardtanh"


HARDTANH_UNSIGNED = "cannot do hardtanh on an unsigned type with negative limits"


def _float_only(kernel: str, fn):
    """A forward for a float-only kernel: torch's error for other dtypes, float32 math for
    float16 / bfloat16."""

    def forward(a, *args):
        kind = a.dtype.kind
        if kind in "biu":
            raise not_implemented(kernel, a.dtype)
        if a.dtype.itemsize < 4:
            return np.asarray(fn(a.astype(np.float32), *args)).astype(a.dtype)
        return fn(a, *args)

    return forward


def _relu(a):
    if a.dtype.kind == "b":
        raise RuntimeError(RELU_BOOL)
    return np.maximum(a, 0 if a.dtype.kind != "V" else a.dtype.type(0))


def _threshold_backward(g, x, threshold, out=None):
    """torch's where(x <= threshold, 0, g): the gradient's own bits where x is not at or below
    the threshold (a nan x keeps its gradient), the bits of +0.0 elsewhere, so a negative or
    infinite gradient there gives 0.0 (a product with a mask would give -0.0 or nan). Done as
    a bitwise and with an all-ones mask, as fast as that product; NumPy's where is ten times
    slower on an irregular mask."""
    if g.dtype.kind not in "fV" or x.dtype.kind == "c":
        return np.multiply(g, x > threshold, dtype=g.dtype, out=out)
    bits = np.dtype(f"i{g.dtype.itemsize}")
    keep = np.subtract(np.less_equal(x, threshold), 1, dtype=bits)  # -1 (all bits) to keep
    if out is None:
        # (0-d operands give NumPy scalars, which take no writes)
        into = keep if type(keep) is np.ndarray and keep.shape == np.shape(g) else None
        return np.bitwise_and(g.view(bits), keep, out=into).view(g.dtype)
    np.bitwise_and(g.view(bits), keep, out=out.view(bits))
    return out


def _relu_direct(dst):
    np.maximum(dst, 0, out=dst)


def _threshold(a, threshold, value):
    return np.where(a > threshold, a, np.asarray(value, a.dtype))


def _check_approximate(approximate) -> None:
    if approximate not in ("none", "tanh"):
        raise RuntimeError(GELU_APPROX)


def _log1p_exp(a):
    """log(1 + exp(a)) without overflow, as max(a, 0) + log1p(exp(-|a|)): NumPy's vectorized
    exp and log1p, within 3 ulp in float32 (np.logaddexp(0, a), within 1.5 ulp, calls the C
    library per element and costs 9x as much)."""
    return np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a)))


def _softplus(a, beta, threshold):
    bx = a * beta
    soft = _log1p_exp(bx) / beta
    return np.where(bx > threshold, a, soft)


def _mish(a):
    with np.errstate(invalid="ignore"):  # -inf * tanh(0) is nan, silently as in torch
        return a * np.tanh(_log1p_exp(a))


def _log_sigmoid(a):
    # min(x, 0) - log1p(exp(-|x|)): no overflow for large |x|
    return np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))


def _elu(a, alpha, scale, input_scale):
    neg = np.expm1(np.minimum(a, 0) * input_scale) * (alpha * scale)
    return np.where(a > 0, a * scale, neg)


def _leaky_relu(a, slope):
    return np.where(a > 0, a, a * slope)


def _hardtanh(a, lo, hi):
    kind = a.dtype.kind
    if kind == "b":
        raise RuntimeError(HARDTANH_BOOL)
    if kind == "u" and (lo < 0 or hi < 0):
        raise RuntimeError(HARDTANH_UNSIGNED)
    if kind != "f":  # the limits in the tensor's dtype (integers keep their dtype)
        lo, hi = np.asarray(lo).astype(a.dtype)[()], np.asarray(hi).astype(a.dtype)[()]
    return np.minimum(np.maximum(a, lo), hi)


def _hardsigmoid(a):
    return np.minimum(np.maximum(a + 3, 0), 6) / 6


def _hardswish(a):
    return a * _hardsigmoid(a)
