"""NumPy kernels of tensor creation: dtype and stride helpers, empty/empty_like arrays, casts with
torch's overflow checks, Python data to arrays, arange's float rounding. retrograd._ops.creation
declares the functions. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from retrograd import _dtype as D

NEGATIVE_STRIDES = (
    "At least one stride in the given numpy array is negative, and tensors with negative strides "
    "are not currently supported. (You can probably work around this by making a copy of your "
    "array  with array.copy().) ")


BYTE_ORDER = ("given numpy array has byte order different from the native byte order. Conversion "
              "between byte orders is currently not supported.")


OVERFLOW = "value cannot be converted to type {} without overflow"


UNPACK_OVERFLOW = "Overflow when unpacking long long"
# C++ type names torch's checked conversions print (full, fill_)
FILL_CPP_NAMES = {"uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
                  "uint64": "uint64_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                  "int64": "int64_t", "float32": "float", "float64": "double",
                  "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                  "float8_e4m3fn": "c10::Float8_e4m3fn", "float8_e5m2": "c10::Float8_e5m2"}


_HAS_INF = {"float8_e4m3fn": False}


def as_dtype(dtype) -> D.dtype | None:
    """A dtype argument: a retrograd dtype, None, or one of the Python types float/int/bool."""
    if dtype is None or isinstance(dtype, D.dtype):
        return dtype
    if dtype is float:
        return D.float64
    if dtype is bool:
        return D.bool
    if dtype is int:
        return D.int64
    raise TypeError(f"dtype must be retrograd.dtype, not {type(dtype).__name__}")


def _contiguous_strides(shape: tuple) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def empty_strided_array(shape: tuple, strides: tuple, np_dtype) -> np.ndarray:
    """An uninitialised array with the given element strides (as torch.empty_strided)."""
    if tuple(strides) == _contiguous_strides(shape):
        return np.empty(shape, np_dtype)
    np_dtype = np.dtype(np_dtype)
    if any(n == 0 for n in shape):
        extent = 0
    else:
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    buf = np.empty(extent, np_dtype)
    return np.lib.stride_tricks.as_strided(
        buf, shape, tuple(s * np_dtype.itemsize for s in strides), writeable=True)


def _non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def dense_strides_like(shape: tuple, strides: tuple) -> tuple:
    """torch's infer_dense_strides: a dense layout ordering dims like `strides` (ties and
    zero strides keep row-major order)."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))  # perm[0] is the innermost dim

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, n):  # stable insertion sort
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out, acc = [0] * n, 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def empty_like_array(a: np.ndarray, np_dtype) -> np.ndarray:
    """torch.empty_like's preserve_format: same strides when dense, else a dense permutation."""
    if a.ndim < 2 or a.size == 0 or (a.flags.c_contiguous and 1 not in a.shape):
        return np.empty(a.shape, np_dtype)
    strides = tuple(s // a.itemsize for s in a.strides)
    if strides == _contiguous_strides(a.shape):
        return np.empty(a.shape, np_dtype)
    if not _non_overlapping_and_dense(a.shape, strides):
        strides = dense_strides_like(a.shape, strides)
    return empty_strided_array(a.shape, strides, np_dtype)


def check_int_scalar(value) -> None:
    """torch unpacks a Python int argument (full's fill value, fill_'s) as a 64-bit integer,
    signed or unsigned: one outside both ranges is refused whatever the dtype."""
    if type(value) is int and not -(1 << 63) <= value < 1 << 64:
        raise OverflowError("int too big to convert" if value > 0 else
                            "can't convert negative int to unsigned")


def check_fits(value, d: D.dtype) -> None:
    """torch's checked conversion of a Python number argument (full's fill value, fill_'s)
    into dtype d: beyond 64-bit integers an OverflowError, out of d's range torch's message."""
    check_int_scalar(value)
    if _overflows(value, d):
        raise RuntimeError(OVERFLOW.format(FILL_CPP_NAMES[d.name]))


def _overflows(value, d: D.dtype) -> bool:
    """c10's overflow check for a Python number stored into dtype d (full, fill_)."""
    if d is D.bool:
        return False
    lo, hi = D.limits(d)
    if d.category == D._INT:
        if isinstance(value, float):
            return value != value or not lo <= value <= hi
        if d is D.uint64:  # any int64 wraps, and the unsigned range is taken as it is
            return not -(1 << 63) <= value <= hi
        if not d.is_signed:  # negative values wrap, down to -max (c10's unsigned check)
            return value > hi or value < -hi
        return not lo <= value <= hi
    v = float(value)
    if v != v:
        return False
    if v in (math.inf, -math.inf):
        return not _HAS_INF.get(d.name, True)
    return abs(v) > hi


def cast_array(arr: np.ndarray, d: D.dtype, copy: bool = True) -> np.ndarray:
    """arr.astype(d) as torch converts: float64 goes through float32 to the 16/8-bit floats,
    and float8_e4m3fn (which has no infinity) saturates at +-448."""
    target = d.np
    if arr.dtype == target:
        return arr.copy() if copy else arr
    with np.errstate(over="ignore", invalid="ignore"):
        if d is D.float8_e4m3fn:
            return np.clip(arr.astype(np.float32), -448.0, 448.0).astype(target)
        if target.itemsize <= 2 and d.category == D._FLOAT and arr.dtype == np.float64:
            return arr.astype(np.float32).astype(target)
        return arr.astype(target)


def copy_array(arr: np.ndarray, d: D.dtype) -> np.ndarray:
    """A converted copy keeping the layout as torch's copies do (preserve_format)."""
    out = empty_like_array(arr, d.np)
    np.copyto(out, cast_array(arr, d, copy=False), casting="unsafe")
    return out


def _numpy_dtype(np_dtype) -> D.dtype:
    if np_dtype.kind in "OUSV" and np_dtype not in D._FROM_NP:
        raise D.unsupported_numpy_dtype(np_dtype)
    return D.from_numpy_dtype(np_dtype)


def _shape_error(data) -> Exception:
    """torch's message for ragged nested sequences."""
    sizes, x = [], data
    while _is_seq(x):
        sizes.append(len(x))
        if not len(x):
            break
        x = x[0]

    def walk(obj, dim: int):
        if dim == len(sizes):
            if _is_seq(obj):
                return TypeError(f"must be real number, not {type(obj).__name__}")
            return None
        if not _is_seq(obj):
            return TypeError("not a sequence")
        if len(obj) != sizes[dim]:
            return ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                              f"(got {len(obj)})")
        for item in obj:
            err = walk(item, dim + 1)
            if err is not None:
                return err
        return None

    return walk(data, 0) or ValueError("could not convert the data to a tensor")


def _is_seq(x) -> bool:
    return isinstance(x, (list, tuple, range, bytearray)) or (
        isinstance(x, Sequence) and not isinstance(x, (str, bytes)))


def _from_python(data, d: D.dtype) -> np.ndarray:
    """Nested Python numbers -> an array of dtype d, with torch's conversions and checks."""
    target = d.np
    try:
        if d.category == D._INT:
            return _python_to_int(data, d)
        if d is D.bool or d is D.float32 or d is D.float64:
            return np.array(data, dtype=target)
        return cast_array(np.array(data, dtype=np.float32), d, copy=False)
    except (ValueError, TypeError) as e:
        if "inhomogeneous" in str(e) or "sequence" in str(e):
            raise _shape_error(data) from None
        raise


def _python_to_int(data, d: D.dtype) -> np.ndarray:
    if d is D.uint64:
        return _python_to_uint64(data)
    try:
        arr = np.array(data)
    except OverflowError:
        raise ValueError(UNPACK_OVERFLOW) from None
    if arr.dtype == object or (arr.dtype == np.uint64 and arr.size and  # beyond int64
                               int(arr.max()) > np.iinfo(np.int64).max):
        raise ValueError(UNPACK_OVERFLOW)
    if arr.dtype.kind == "f":
        lo, hi = D.limits(d)
        bad = np.isnan(arr) | (arr < lo) | (arr > hi)
        if bad.any():
            raise RuntimeError(OVERFLOW.format(d.name))
        with np.errstate(invalid="ignore"):
            return arr.astype(d.np)
    if arr.dtype.kind in "iu" and d is not D.int64 and arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        low, high = D.limits(d)
        low = low if d.is_signed else -high  # unsigned: negative values wrap, down to -max
        if lo < low or hi > high:
            raise RuntimeError(OVERFLOW.format(d.name))
    return arr.astype(d.np)


def _python_to_uint64(data) -> np.ndarray:
    """Python ints as torch unpacks them into uint64: as unsigned 64-bit numbers, so a
    negative one or one of 2**64 or more is refused, and a float is not an integer. (NumPy
    alone would make floats of ints on both sides of 2**63.)"""
    held = np.array(data, dtype=object)
    values = []
    for v in held.ravel():
        if isinstance(v, (float, np.floating)):
            raise TypeError("an integer is required")
        v = int(v)
        if v < 0:
            raise OverflowError("can't convert negative int to unsigned")
        if v >= 1 << 64:
            raise OverflowError("int too big to convert")
        values.append(v)
    return np.array(values, np.uint64).reshape(held.shape)


def _check_numpy_layout(arr: np.ndarray) -> None:
    """What torch refuses in an ndarray it reads: negative strides, foreign byte order."""
    if not arr.dtype.isnative and arr.dtype.kind in "biuf":
        raise ValueError(BYTE_ORDER)
    if any(s < 0 for s in arr.strides):
        raise ValueError(NEGATIVE_STRIDES)


def _float_dtype(dtype) -> D.dtype:
    return as_dtype(dtype) or D.get_default_dtype()


# torch's CPU kernels for arange compute in float64 (float32 / float64 results) or float32
# (float16 / bfloat16) as fused multiply-adds, in vector blocks: each block of V elements starts
# from `start + step * i0` rounded to the output dtype, the block's others are `base + k * step`;
# the last n % (2V) elements are computed one by one. This reproduces those roundings.
_VEC = {"float64": 4, "float32": 8, "float16": 16, "bfloat16": 16}


_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitting constant


def fma64(a, b, c) -> np.ndarray:
    """a * b + c rounded once (float64 arrays), from an exact product and an exact sum."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    p = a * b
    f = _SPLIT * a
    ah = f - (f - a)
    al = a - ah
    g = _SPLIT * b
    bh = g - (g - b)
    bl = b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    z = s - p
    t = (p - (s - z)) + (c - z)
    return s + (t + err)


def fma_index(x: float, idx: np.ndarray, c, bound: int) -> np.ndarray:
    """x * idx + c rounded once, for a float x and integer-valued idx with |idx| <= bound: for
    bound < 2**26, x is split in two 26-bit halves, so both partial products are exact."""
    if bound >= 2**26:
        return fma64(x, idx, c)
    f = _SPLIT * x
    xh = f - (f - x)
    xl = x - xh
    ph = idx * xh
    pl = idx * xl
    s = ph + c
    z = s - ph
    t = (ph - (s - z)) + (c - z)
    return s + (t + pl)


def _fma32(a, b, c) -> np.ndarray:
    """float32 a * b + c rounded once (the float64 product of two float32 values is exact)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64)
            + np.asarray(c, np.float64)).astype(np.float32)


def _arange_float(start: float, step: float, n: int, d: D.dtype) -> np.ndarray:
    vec = _VEC.get(d.name, 0)
    i = np.arange(n, dtype=np.float64)
    if not vec or n < 2 * vec:
        k = np.zeros(n)
    else:  # position in the vector block; the tail is computed element by element
        ki = np.arange(n) & (vec - 1)
        ki[n - n % (2 * vec):] = 0
        k = ki.astype(np.float64)
    if d is D.float64 or d is D.float32:
        base = fma_index(step, i - k, start, n)
        if not vec or n < 2 * vec:
            return base.astype(d.np)
        base = base.astype(d.np).astype(np.float64)
        return np.where(k > 1, fma_index(step, k, base, vec), base + k * step).astype(d.np)
    # float16 / bfloat16 / float8: accumulate in float32
    s32, st32 = np.float32(start), np.float32(step)
    base = _fma32(st32, i - k, s32).astype(d.np).astype(np.float32)
    k32 = k.astype(np.float32)
    if d is D.bfloat16:  # its vector arange multiplies and adds separately
        ramp = base + k32 * st32
    else:
        ramp = _fma32(k32, st32, base)
    return np.where(k > 1, ramp, base + k32 * st32).astype(d.np)


def _c_number(x) -> str:
    """A number as C++'s ostream prints it (%g)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def _arange_size(start, end, step, d: D.dtype) -> int:
    if not step > 0 and not step < 0:
        raise RuntimeError("step must be nonzero")
    fs, fe = float(start), float(end)
    if not (math.isfinite(fs) and math.isfinite(fe)):
        raise RuntimeError(f"unsupported range: {_c_number(fs)} -> {_c_number(fe)}")
    if not ((step > 0 and fe >= fs) or (step < 0 and fe <= fs)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if d is D.int64:
        xs, xe, xst = int(start), int(end), int(step)
        if xst == 0:
            raise ValueError("step must be nonzero")
        sgn = (xst > 0) - (xst < 0)
        num = xe - xs + xst - sgn
        size = abs(num) // abs(xst) * (1 if (num >= 0) == (xst > 0) else -1)
    else:
        size = math.ceil((fe - fs) / float(step))
        if not 0 <= size <= 2**63:
            raise RuntimeError("invalid size, possible overflow?")
    return int(size)
