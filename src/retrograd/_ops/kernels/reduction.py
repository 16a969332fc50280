"""NumPy kernels of the reductions' var/std and vector-norm part, with the dim handling and
reduce helpers every reduction uses: functions on plain arrays and Python numbers. No Tensor here:
retrograd._ops.reduction declares the ops on these.
"""

from __future__ import annotations

import builtins
import math
from typing import Literal

import numpy as np

from retrograd import _dtype as D
from retrograd import _errors as E
from retrograd import _warning_site as _ws

VAR_DTYPE = "{} only support floating point and complex dtypes"
DOF_WARNING = ("{}(): degrees of freedom is <= 0. Correction should be strictly less than the "
               "reduction factor (input numel divided by output numel).")
NORM_DTYPE = "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}"
NORM_NARROWING = ("linalg.vector_norm: the dtype of the input ({}) should be convertible without "
                  "narrowing to the specified dtype ({})")
NORM_EMPTY = ("linalg.vector_norm cannot compute the {} norm on an empty tensor because the "
              "operation does not have an identity")
DUPLICATE_DIM = "dim {} appears multiple times in the list of dims"


def scalar_name(dt: np.dtype) -> str:
    """torch's ScalarType name of a NumPy dtype: Float, Double, Int, Long, Bool, ..."""
    return D.from_numpy_dtype(dt)._legacy.replace("Tensor", "")


def dims(dim, ndim: int):
    """Normalize an int / list of ints / None to a tuple of non-negative dims (None: all)."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    n = ndim if ndim > 0 else 1
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(E.DIM_RANGE.format(-n, n - 1, d))
        d %= n
        if d in out:
            raise RuntimeError(DUPLICATE_DIM.format(d))
        out.append(d)
    return tuple(out) if ndim > 0 else ()


def reduced_axes(dim, ndim: int):
    """Reduced axes for NumPy; None (all) for dim=None and for an empty dim list, as torch."""
    axes = dims(dim, ndim)
    return axes if axes else None


def out_shape(shape: tuple, axes, keepdim: bool) -> tuple:
    if axes is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def reduce(fn, a, axes, keepdim: bool, out_dtype=None, **kw) -> np.ndarray:
    """fn(a, axis=axes) into a fresh row-major output (NumPy keeps the input's layout)."""
    if a.ndim == 0:
        axes = None
    if axes is None and not keepdim:
        return np.asarray(fn(a, axis=None, **kw), dtype=out_dtype)
    shape_axes = (axes,) if isinstance(axes, int) else axes  # argmax takes a single int axis
    out = np.empty(out_shape(a.shape, shape_axes, keepdim), out_dtype or a.dtype)
    fn(a, axis=axes, keepdims=keepdim, out=out, **kw)
    return out


def count(shape: tuple, axes) -> int:
    return math.prod(shape) if axes is None else math.prod(shape[d] for d in axes)


def float_acc(dt: np.dtype):
    """Accumulation dtype for sums: float32 for the 16-bit floats, as torch's acc_type."""
    return np.float32 if dt.kind == "V" or dt == np.float16 else None


# NOTE [Running scans]
# torch's CPU cumsum and cumprod carry the running value in the accumulation type (float32 for
# the 16-bit floats, float64 for float32, int64 for integers), after casting the input to the
# result dtype, and round each output once. NumPy's accumulate walks one element at a time with
# a cast per element; where the slices across the scanned axis are large, a loop over that axis
# is faster (one vectorized add per step, no cast) and adds in the same order.
_SCAN_SLAB = 512


def cumulative(ufunc, a: np.ndarray, axis: int, out: np.ndarray) -> np.ndarray:
    """ufunc.accumulate(a) along axis into `out` (any layout), as torch's CPU scans compute it."""
    if a.size == 0:
        return out
    if a.dtype != out.dtype:
        a = a.astype(out.dtype)
    acc = np.float64 if out.dtype == np.float32 else float_acc(out.dtype) or out.dtype
    n = a.shape[axis]
    with np.errstate(over="ignore"):  # past the 16-bit range is inf, silently
        if n > 1 and a.size // n >= _SCAN_SLAB:
            src, dst = np.moveaxis(a, axis, 0), np.moveaxis(out, axis, 0)
            running = src[0].astype(acc)
            dst[0] = running
            for i in range(1, n):
                ufunc(running, src[i], out=running)
                dst[i] = running
        elif acc == out.dtype:
            ufunc.accumulate(a, axis=axis, out=out)
        else:
            wide = a.astype(acc)  # a cast in one pass: accumulate's per-element cast is slower
            ufunc.accumulate(wide, axis=axis, out=wide)
            out[...] = wide
    return out


def upcast16(forward):
    """Run a forward on a 16-bit float input in float32 and round its results once (torch
    computes these reductions in its accumulation type)."""

    def wrapped(a, *args):
        acc = float_acc(a.dtype)
        if acc is None:
            return forward(a, *args)
        out = forward(a.astype(acc), *args)
        with np.errstate(over="ignore"):  # results past the 16-bit range round to inf
            if isinstance(out, tuple):
                return tuple(np.asarray(o).astype(a.dtype) for o in out)
            return np.asarray(out).astype(a.dtype)

    return wrapped


def row_sums(a: np.ndarray) -> np.ndarray:
    """Sums along the rows of a 2-d array, as a matrix-vector product with ones (BLAS: several
    times faster than NumPy's reduction along a short last axis, which loops per row)."""
    return a @ np.ones(a.shape[1], a.dtype)


def column_sums(a: np.ndarray) -> np.ndarray:
    return np.ones(a.shape[0], a.dtype) @ a


SHORT_ROW = 128  # longer rows: add.reduce's pairwise sums (more accurate, and its loop is cheap)


def last_axis_sums(a: np.ndarray) -> np.ndarray:
    """Sums along the last axis (kept as a size-1 dim): short float32/float64 rows by row_sums,
    others by add.reduce."""
    n = a.shape[-1]
    if 1 < n <= SHORT_ROW and a.dtype in (np.float32, np.float64):
        return row_sums(a.reshape(-1, n)).reshape(a.shape[:-1] + (1,))
    return np.add.reduce(a, axis=-1, keepdims=True)


def float_sum(a, axes, keepdim: bool) -> np.ndarray:
    """reduce(np.sum, ...) of a float array, in one ufunc call where that already gives a
    row-major result: a full reduction, or a row-major input."""
    if a.dtype.kind == "f" and (axes is None and not keepdim or a.ndim and a.flags.c_contiguous):
        # (numpy's stubs take only a literal keepdims)
        return np.asarray(np.add.reduce(a, axis=axes, keepdims=keepdim))  # type: ignore[call-overload]
    return reduce(np.sum, a, axes, keepdim)


def var(name: str, a, dim, correction, keepdim: bool, sqrt: bool = False):
    """Two-pass variance (mean, then squared deviations), dof clamped at 0 as torch; its
    square root when `sqrt`. float32 is computed in float32, and again in float64 (torch
    accumulates in double) only when that overflowed (squares of values past 1.8e19 do): the
    floating-point overflow flag tells, at no cost to the common case."""
    if a.dtype.kind not in "fV":
        raise RuntimeError(VAR_DTYPE.format("std and var" if name in ("std", "var") else name))
    axes = reduced_axes(dim, a.ndim)
    n = count(a.shape, axes)
    dof = builtins.max(n - (1 if correction is None else correction), 0)
    if dof <= 0:
        _ws.warn(DOF_WARNING.format(name), UserWarning, stacklevel=4)
    if a.dtype != np.float32:
        out, mean = var_parts(a, axes, n, dof, keepdim, "ignore")
    else:
        try:
            out, mean = var_parts(a, axes, n, dof, keepdim, "raise")
        except FloatingPointError:
            out, mean = var_parts(a.astype(np.float64), axes, n, dof, keepdim, "ignore")
            if sqrt:
                out = np.sqrt(out)
            with np.errstate(over="ignore"):  # a variance past float32's range is inf
                return np.asarray(out, a.dtype), np.asarray(mean, a.dtype)
    if sqrt:
        out = np.sqrt(out, out=out) if out.ndim else np.sqrt(out)
    return np.asarray(out, a.dtype), mean


def var_parts(a, axes, n: int, dof: int, keepdim: bool, over: Literal["ignore", "raise"]):
    with np.errstate(invalid="ignore", divide="ignore", over=over):
        mean = float_sum(a, axes, True) / a.dtype.type(n)
        dev = np.asarray(a - mean)  # 0-dim operands give a NumPy scalar
        out = float_sum(np.multiply(dev, dev, out=dev), axes, keepdim)
        out = np.true_divide(out, a.dtype.type(dof), out=out if out.ndim else None)
        mean = mean if keepdim else mean.reshape(out.shape)
    return out, mean


def ord_text(p) -> str:
    p = float(p)
    if math.isinf(p):
        return "inf" if p > 0 else "-inf"
    return str(int(p)) if p.is_integer() else repr(p)


def vector_norm(a, ord, dim, keepdim, dtype):
    if a.dtype.kind not in "fV":
        raise RuntimeError(NORM_DTYPE.format(scalar_name(a.dtype)))
    if dtype is not None and dtype.np != a.dtype:
        src = D.from_numpy_dtype(a.dtype)
        if D.promote_types(src, dtype) is not dtype:
            raise RuntimeError(NORM_NARROWING.format(scalar_name(a.dtype),
                                                     scalar_name(dtype.np)))
        a = a.astype(dtype.np)
    acc = float_acc(a.dtype)
    if acc is not None:
        return vector_norm(a.astype(acc), ord, dim, keepdim, None).astype(a.dtype)
    axes = reduced_axes(dim, a.ndim)
    p = float(ord)
    if (p < 0 or math.isinf(p)) and a.size == 0 and (
            axes is None or builtins.any(a.shape[d] == 0 for d in axes)):
        raise RuntimeError(NORM_EMPTY.format(ord_text(ord)))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if p == 2:
            out = reduce(np.sum, np.square(a), axes, keepdim)
            return np.sqrt(out, out=out) if out.ndim else np.sqrt(out)
        if p == 0:
            return reduce(np.sum, a != 0, axes, keepdim, a.dtype, dtype=a.dtype)
        mag = np.abs(a)
        if p == 1:
            return reduce(np.sum, mag, axes, keepdim)
        if math.isinf(p):
            return reduce(np.max if p > 0 else np.min, mag, axes, keepdim)
        t = a.dtype.type
        powers = np.power(mag, t(p), out=mag) if mag.ndim else np.power(mag, t(p))
        out = reduce(np.sum, powers, axes, keepdim)
        return np.power(out, t(1.0 / p), out=out) if out.ndim else np.power(out, t(1.0 / p))
