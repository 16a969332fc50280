"""NumPy kernels of comparisons and bitwise ops: bitwise kernels with torch's dtype checks, float
value tests, isclose. retrograd._ops.comparison declares the ops. No Tensor here: plain arrays
and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.layout import binary, not_implemented, type_name

DTYPE_MISMATCH = "{} did not match {}"


TOL_NEGATIVE = "{} must be greater than or equal to zero, but got {}"


def _bitwise(ufunc, kernel: str):
    fwd = binary(ufunc)
    # shifts have no bool kernel in torch
    bad = "fV" if kernel.startswith("bitwise") else "fVb"

    def forward(a, b):
        for x in (a, b):
            if type(x) is np.ndarray and x.dtype.kind in bad:
                raise not_implemented(kernel, x.dtype)
        return fwd(a, b)

    return forward


def _bitwise_not(a):
    if a.dtype.kind in "fV":
        raise not_implemented("bitwise_not_cpu", a.dtype)
    return np.logical_not(a) if a.dtype.kind == "b" else np.invert(a)


def _float_test(ufunc, default: bool):
    """isnan/isinf/...: NumPy's test on floats; integers and bools are always finite numbers."""

    def forward(a):
        if a.dtype.kind in "biu":
            return np.full(a.shape, default)
        return ufunc(a)

    return forward


def _isclose(a, b, rtol, atol, equal_nan):
    if b.__class__ is not np.ndarray:
        raise TypeError(f"isclose(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(b).__name__}")
    if a.dtype != b.dtype:
        raise RuntimeError(DTYPE_MISMATCH.format(type_name(a.dtype), type_name(b.dtype)))
    if rtol < 0:
        raise RuntimeError(TOL_NEGATIVE.format("rtol", rtol))
    if atol < 0:
        raise RuntimeError(TOL_NEGATIVE.format("atol", atol))
    close = np.equal(a, b)
    kind = a.dtype.kind
    if kind in "biu":
        # integer tensors: the error is computed in the default float dtype
        work = D.get_default_dtype().np
        a, b = a.astype(work), b.astype(work)
    elif kind == "V":
        a, b = a.astype(np.float32), b.astype(np.float32)
    elif equal_nan:
        close |= np.isnan(a) & np.isnan(b)
    allowed = atol + np.abs(rtol * b)
    actual = np.abs(a - b)
    close |= np.isfinite(actual) & (actual <= allowed)
    return close
