"""Creating tensors: from data (tensor, as_tensor, from_numpy), filled (zeros, ones, full, empty,
eye, empty_strided), ranges (arange, linspace, logspace), the *_like functions and the
Tensor.new_* methods.

dtype inference follows torch: Python floats give the default dtype, ints int64, bools bool,
NumPy arrays and scalars keep their dtype, and the elements of a sequence are combined with
promote_types. Where torch rounds through float32 (float64 -> float16 / bfloat16 / float8) or
computes a range in a particular order (arange's vectorised kernel, linspace's two halves), the
code below does the same so values match bit for bit.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from retrograd import _dtype as D
from retrograd._memory_format import as_format, empty_array
from retrograd._ops.registry import register, register_method
from retrograd._tensor import Size, Tensor, _wrap

# --- messages ---------------------------------------------------------------------------------

NEGATIVE_STRIDES = (
    "At least one stride in the given numpy array is negative, and tensors with negative strides "
    "are not currently supported. (You can probably work around this by making a copy of your "
    "array  with array.copy().) ")
STRIDES_NOT_MULTIPLE = ("given numpy array strides not a multiple of the element byte size. Copy "
                        "the numpy array to reallocate the memory.")
BYTE_ORDER = ("given numpy array has byte order different from the native byte order. Conversion "
              "between byte orders is currently not supported.")
NOT_WRITABLE = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
    "This means writing to this tensor will result in undefined behavior. You may want to copy "
    "the array to protect its data or make it writable before converting it to a tensor. This "
    "type of warning will be suppressed for the rest of this program.")
COPY_CONSTRUCT = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")
NEGATIVE_DIM = "Trying to create tensor with negative dimension {}: {}"
OVERFLOW = "value cannot be converted to type {} without overflow"
UNPACK_OVERFLOW = "Overflow when unpacking long long"
ONE_ELEMENT = "only one element tensors can be converted to Python scalars"

# C++ type names torch's checked conversions print (full, fill_) ...
_CPP_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
              "int64": "int64_t", "float32": "float", "float64": "double",
              "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "float8_e4m3fn": "c10::Float8_e4m3fn", "float8_e5m2": "c10::Float8_e5m2"}
_HAS_INF = {"float8_e4m3fn": False}
_warned_not_writable = False


# --- small helpers ----------------------------------------------------------------------------


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


def _check_device(device) -> None:
    if device is not None and not (device == "cpu" or getattr(device, "type", None) == "cpu"):
        from retrograd._device import device as make_device

        make_device(device)  # raises for devices retrograd does not have


REQUIRES_GRAD_FACTORY = ("Only Tensors of floating point and complex dtype can require "
                         "gradients")


def _finish(arr: np.ndarray, requires_grad: bool) -> Tensor:
    out = _wrap(arr)
    if requires_grad:
        if not out.is_floating_point():
            raise RuntimeError(REQUIRES_GRAD_FACTORY)
        out.requires_grad = True
    return out


def _write_out(out: Tensor, arr: np.ndarray) -> Tensor:
    """Store a result into `out=` (resized when the shape differs, as torch does)."""
    from retrograd._ops.inplace import bump_version

    if out._data.shape == arr.shape:
        np.copyto(out._data, arr, casting="unsafe")
    else:
        out._data = arr.astype(out._data.dtype, copy=False)
    bump_version(out, "out")
    return out


def _result(arr: np.ndarray, out, requires_grad: bool) -> Tensor:
    return _finish(arr, requires_grad) if out is None else _write_out(out, arr)


def _int_like(s) -> bool:
    t = type(s)
    if t is int:
        return True
    if t is bool:
        return False
    if isinstance(s, Tensor):
        return s.dtype.category == D._INT and s._data.size == 1
    return isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_))


def parse_size(name: str, size: tuple, kwargs: dict | None = None, neg_msg: str | None = None
               ) -> tuple:
    """`f(2, 3)`, `f((2, 3))`, `f(Size)` and `f(size=...)` -> a tuple of non-negative ints."""
    if not kwargs:  # fast path: f(2, 3) / f((2, 3))
        shape = size[0] if len(size) == 1 and type(size[0]) in (tuple, Size) else size
        if shape and all(type(s) is int and s >= 0 for s in shape) or shape == ():
            if size:
                return tuple(shape)
    if kwargs:
        if "size" in kwargs:
            size = (kwargs.pop("size"),)
        if kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and not _int_like(size[0]):
        seq = size[0]
        if isinstance(seq, (str, bytes)) or not isinstance(seq, (Sequence, np.ndarray)):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(seq).__name__}")
        size = tuple(seq)
    for i, s in enumerate(size):
        if not _int_like(s):
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} "
                            f"with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"")
    shape = tuple(operator.index(s) for s in size)
    for s in shape:
        if s < 0:
            raise RuntimeError(neg_msg or NEGATIVE_DIM.format(s, list(shape)))
    return shape


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


# --- scalar conversion with torch's overflow checks -------------------------------------------


def _overflows(value, d: D.dtype) -> bool:
    """c10's overflow check for a Python number stored into dtype d (full, fill_)."""
    if d is D.bool:
        return False
    lo, hi = D.limits(d)
    if d.category == D._INT:
        if isinstance(value, float):
            return value != value or not lo <= value <= hi
        if d is D.uint8:  # negative values wrap, down to -255
            return value > 255 or value < -255
        return not lo <= value <= hi
    v = float(value)
    if v != v:
        return False
    if v in (math.inf, -math.inf):
        return not _HAS_INF.get(d.name, True)
    return abs(v) > hi


def scalar_as(value, d: D.dtype):
    """A Python number as a NumPy scalar of dtype d, converted the way torch converts it."""
    if isinstance(value, Tensor):
        value = value.item()
    if d is D.bool:
        return np.bool_(value)
    if d.category == D._INT:
        return np.array(int(value)).astype(d.np)
    if d is D.float64 or d is D.float32:
        return d.np.type(value)
    # torch goes double -> float -> half / bfloat16 / float8
    return cast_array(np.array(value, np.float32), d)[()]


def checked_scalar(value, d: D.dtype):
    if _overflows(value, d):
        raise RuntimeError(OVERFLOW.format(_CPP_NAMES[d.name]))
    return scalar_as(value, d)


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


# --- tensor(data) ----------------------------------------------------------------------------


class _Scan:
    """What a walk over nested data found."""

    __slots__ = ("tensors",)

    def __init__(self) -> None:
        self.tensors = False


_PY_DTYPES = {bool: "bool", int: "int64"}


def _infer(obj, scan: _Scan) -> D.dtype:
    """torch's infer_scalar_type: element dtypes of a sequence combine with promote_types."""
    t = type(obj)
    if t is float:
        return D.get_default_dtype()
    if t is int:
        return D.int64
    if t is bool:
        return D.bool
    if t is list or t is tuple:
        return _infer_seq(obj, scan)
    if isinstance(obj, np.ndarray):
        return _numpy_dtype(obj.dtype)
    if isinstance(obj, np.generic):
        return _numpy_dtype(obj.dtype)
    if isinstance(obj, Tensor):
        scan.tensors = True
        return obj.dtype
    if isinstance(obj, float):
        return D.get_default_dtype()
    if isinstance(obj, bool):
        return D.bool
    if isinstance(obj, int):
        return D.int64
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{t.__name__}'")
    if isinstance(obj, complex):
        raise TypeError("retrograd has no complex dtypes")
    if isinstance(obj, (Sequence, bytearray)):
        return _infer_seq(obj, scan)
    raise RuntimeError(f"Could not infer dtype of {t.__name__}")


def _infer_seq(seq, scan: _Scan) -> D.dtype:
    if len(seq) == 0:
        return D.get_default_dtype()
    types = set(map(type, seq))
    if len(types) == 1:
        t = next(iter(types))
        if t is float:
            return D.get_default_dtype()
        if t in _PY_DTYPES:
            return getattr(D, _PY_DTYPES[t])
    result = None
    for x in seq:
        d = _infer(x, scan)
        result = d if result is None else D.promote_types(result, d)
    return result


def _numpy_dtype(np_dtype) -> D.dtype:
    if np_dtype.kind in "OUSV" and np_dtype not in D._FROM_NP:
        raise D.unsupported_numpy_dtype(np_dtype)
    return D.from_numpy_dtype(np_dtype)


def _tensors_to_scalars(obj):
    """Tensors inside a sequence are scalars to torch.tensor (one element each)."""
    if isinstance(obj, Tensor):
        if obj._data.size != 1:
            raise ValueError(ONE_ELEMENT)
        return obj.item()
    if isinstance(obj, (list, tuple)):
        return [_tensors_to_scalars(x) for x in obj]
    return obj


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
    try:
        arr = np.array(data)
    except OverflowError:
        raise ValueError(UNPACK_OVERFLOW) from None
    if arr.dtype == object or arr.dtype.kind == "u":  # ints beyond int64
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
        low = -255 if d is D.uint8 else low
        if lo < low or hi > high:
            raise RuntimeError(OVERFLOW.format(d.name))
    return arr.astype(d.np)


def to_numpy_array(data, dtype: D.dtype | None = None) -> np.ndarray:
    """A fresh array holding `data`, as torch.tensor(data, dtype=dtype) builds it."""
    dtype = as_dtype(dtype)
    if isinstance(data, Tensor):
        return copy_array(data._data, dtype or data.dtype)
    if isinstance(data, np.ndarray):
        _check_numpy_layout(data)
        return copy_array(data, dtype or _numpy_dtype(data.dtype))
    if isinstance(data, np.generic):
        return cast_array(np.asarray(data), dtype or _numpy_dtype(data.dtype))
    scan = _Scan()
    inferred = _infer(data, scan)
    if scan.tensors:
        data = _tensors_to_scalars(data)
    elif not isinstance(data, (list, tuple, int, float)) and _is_seq(data):
        data = list(data)  # range, bytearray, other sequences
    return _from_python(data, dtype or inferred)


def tensor(data, *, dtype: D.dtype | None = None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """torch.tensor: always copies; infers the dtype from the data."""
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT, UserWarning, stacklevel=2)
    _check_device(device)
    return _finish(to_numpy_array(data, dtype), requires_grad)


def scalar_tensor(s, *, dtype: D.dtype | None = None, device=None, requires_grad: bool = False,
                  layout=None, pin_memory: bool = False) -> Tensor:
    d = as_dtype(dtype) or D.get_default_dtype()
    return _finish(np.array(scalar_as(s, d)), requires_grad)


def _check_numpy_layout(arr: np.ndarray) -> None:
    """What torch refuses in an ndarray it reads: negative strides, foreign byte order."""
    if not arr.dtype.isnative and arr.dtype.kind in "biuf":
        raise ValueError(BYTE_ORDER)
    if any(s < 0 for s in arr.strides):
        raise ValueError(NEGATIVE_STRIDES)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """torch.from_numpy: a tensor sharing the array's memory."""
    global _warned_not_writable
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt = ndarray.dtype
    if dt not in D._FROM_NP:
        if dt.kind in "biuf" and not dt.isnative:
            raise ValueError(BYTE_ORDER)
        if dt.kind == "u":
            raise TypeError(f"can't convert np.ndarray of type numpy.{dt.type.__name__} without "
                            "a copy: retrograd has no dtype for it (use tensor() to copy it into "
                            "int64)")
        raise D.unsupported_numpy_dtype(dt)
    flags = ndarray.flags
    if not flags.c_contiguous:  # contiguous arrays have positive, aligned strides
        strides = ndarray.strides
        if any(s < 0 for s in strides):
            raise ValueError(NEGATIVE_STRIDES)
        if any(s % dt.itemsize for s in strides):
            raise ValueError(STRIDES_NOT_MULTIPLE)
    if not flags.writeable and not _warned_not_writable:
        _warned_not_writable = True
        warnings.warn(NOT_WRITABLE, UserWarning, stacklevel=2)
    return _wrap(ndarray)


def as_tensor(data, dtype: D.dtype | None = None, device=None) -> Tensor:
    """torch.as_tensor: shares memory with a Tensor or ndarray of the right dtype, else copies."""
    dtype = as_dtype(dtype)
    _check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, np.ndarray):
        t = from_numpy(data)
        return t if dtype is None or t.dtype is dtype else _wrap(cast_array(data, dtype))
    return _wrap(to_numpy_array(data, dtype))


def asarray(obj, *, dtype: D.dtype | None = None, device=None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """torch.asarray: as_tensor, with copy=True forcing a copy and copy=False forbidding one."""
    dtype = as_dtype(dtype)
    if copy:
        src = obj.detach() if isinstance(obj, Tensor) else obj
        out = _wrap(to_numpy_array(src, dtype))
    else:
        out = as_tensor(obj, dtype, device)
        if copy is False and not _shares(out, obj):
            raise ValueError("can't alias tensor from a different dtype or a Python sequence "
                             "without copying")
    if requires_grad:
        out.requires_grad = True
    return out


def _shares(t: Tensor, obj) -> bool:
    if isinstance(obj, Tensor):
        return t is obj
    return isinstance(obj, np.ndarray) and np.shares_memory(t._data, obj)


# --- filled tensors -------------------------------------------------------------------------


def _float_dtype(dtype) -> D.dtype:
    return as_dtype(dtype) or D.get_default_dtype()


def zeros(*size, out: Tensor | None = None, dtype: D.dtype | None = None, layout=None,
          device=None, pin_memory: bool = False, requires_grad: bool = False, names=None,
          **kwargs) -> Tensor:
    shape = parse_size("zeros", size, kwargs, "zeros: Dimension size must be non-negative.")
    _check_device(device)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    return _result(np.zeros(shape, d.np), out, requires_grad)


def ones(*size, out: Tensor | None = None, dtype: D.dtype | None = None, layout=None,
         device=None, pin_memory: bool = False, requires_grad: bool = False, names=None,
         **kwargs) -> Tensor:
    shape = parse_size("ones", size, kwargs)
    _check_device(device)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    return _result(np.ones(shape, d.np), out, requires_grad)


def empty(*size, out: Tensor | None = None, dtype: D.dtype | None = None, layout=None,
          device=None, pin_memory: bool = False, requires_grad: bool = False,
          memory_format=None, names=None, **kwargs) -> Tensor:
    shape = parse_size("empty", size, kwargs)
    _check_device(device)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    if memory_format is not None:
        return _result(empty_array(shape, d.np, as_format(memory_format)), out, requires_grad)
    return _result(np.empty(shape, d.np), out, requires_grad)


def _fill_dtype(fill_value) -> D.dtype:
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return D.scalar_dtype(fill_value)


def _check_fill(name: str, fill_value) -> None:
    if isinstance(fill_value, Tensor):
        if fill_value._data.ndim == 0:
            return
    elif isinstance(fill_value, (int, float, np.number, np.bool_)):
        return
    raise TypeError(f"{name}(): argument 'fill_value' (position 2) must be Number, not "
                    f"{type(fill_value).__name__}")


def full(size, fill_value, *, out: Tensor | None = None, dtype: D.dtype | None = None,
         layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
         names=None) -> Tensor:
    if not isinstance(size, (Sequence, np.ndarray)) or isinstance(size, (str, bytes)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = parse_size("full", (size,))
    _check_fill("full", fill_value)
    _check_device(device)
    d = as_dtype(dtype) or (out.dtype if out is not None else _fill_dtype(fill_value))
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _result(np.full(shape, checked_scalar(value, d), d.np), out, requires_grad)


def empty_strided(size, stride, *, dtype: D.dtype | None = None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    shape = parse_size("empty_strided", (size,))
    strides = tuple(operator.index(s) for s in stride)
    if len(strides) != len(shape):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(strides)})")
    if any(s < 0 for s in strides):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                           f"strides={list(strides)}")
    _check_device(device)
    return _finish(empty_strided_array(shape, strides, _float_dtype(dtype).np), requires_grad)


def eye(n, m=None, *, out: Tensor | None = None, dtype: D.dtype | None = None, layout=None,
        device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    for name, v in (("n", n), ("m", m)):
        if v is not None and not _int_like(v):
            raise TypeError(f"eye(): argument '{name}' must be int, not {type(v).__name__}")
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    m = n if m is None else operator.index(m)
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    _check_device(device)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    return _result(np.eye(n, m, dtype=d.np), out, requires_grad)


# --- *_like ---------------------------------------------------------------------------------


def _like(input: Tensor, dtype, memory_format) -> np.ndarray:
    arr = input._data
    np_dtype = arr.dtype if dtype is None else as_dtype(dtype).np
    fmt = as_format(memory_format)
    if fmt is not None and fmt != "preserve_format":
        return empty_array(arr.shape, np_dtype, fmt)
    return empty_like_array(arr, np_dtype)


def empty_like(input: Tensor, *, dtype: D.dtype | None = None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None, pin_memory: bool = False
               ) -> Tensor:
    return _finish(_like(input, dtype, memory_format), requires_grad)


def zeros_like(input: Tensor, *, dtype: D.dtype | None = None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None, pin_memory: bool = False
               ) -> Tensor:
    out = _like(input, dtype, memory_format)
    out.fill(0)
    return _finish(out, requires_grad)


def ones_like(input: Tensor, *, dtype: D.dtype | None = None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None, pin_memory: bool = False
              ) -> Tensor:
    out = _like(input, dtype, memory_format)
    out.fill(1)
    return _finish(out, requires_grad)


def full_like(input: Tensor, fill_value, *, dtype: D.dtype | None = None, layout=None,
              device=None, requires_grad: bool = False, memory_format=None,
              pin_memory: bool = False) -> Tensor:
    _check_fill("full_like", fill_value)
    out = _like(input, dtype, memory_format)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    out.fill(checked_scalar(value, D.from_numpy_dtype(out.dtype)))
    return _finish(out, requires_grad)


# --- Tensor.new_* ---------------------------------------------------------------------------


def _new_factory(fn, name: str):
    def method(self: Tensor, *size, dtype: D.dtype | None = None, device=None,
               requires_grad: bool = False, layout=None, pin_memory: bool = False, **kwargs):
        shape = parse_size(name, size, kwargs)
        return fn(shape, dtype=as_dtype(dtype) or self.dtype, device=device,
                  requires_grad=requires_grad)

    method.__name__ = method.__qualname__ = name
    return method


def new_full(self: Tensor, size, fill_value, *, dtype: D.dtype | None = None, device=None,
             requires_grad: bool = False, layout=None, pin_memory: bool = False) -> Tensor:
    return full(size, fill_value, dtype=as_dtype(dtype) or self.dtype, device=device,
                requires_grad=requires_grad)


def new_tensor(self: Tensor, data, *, dtype: D.dtype | None = None, device=None,
               requires_grad: bool = False, layout=None, pin_memory: bool = False) -> Tensor:
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT.replace("torch.tensor(sourceTensor)",
                                             "tensor.new_tensor(sourceTensor)"),
                      UserWarning, stacklevel=2)
    d = as_dtype(dtype) or self.dtype
    return _finish(to_numpy_array(data, d), requires_grad)


def new_empty_strided(self: Tensor, size, stride, *, dtype: D.dtype | None = None, device=None,
                      requires_grad: bool = False, layout=None, pin_memory: bool = False
                      ) -> Tensor:
    return empty_strided(size, stride, dtype=as_dtype(dtype) or self.dtype, device=device,
                         requires_grad=requires_grad)


# --- ranges ---------------------------------------------------------------------------------
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


def _number(x):
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    return x


def arange(start, end=None, step=1, *, out: Tensor | None = None, dtype: D.dtype | None = None,
           layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False
           ) -> Tensor:
    """torch.arange with torch's length and torch's float rounding."""
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    _check_device(device)
    d = as_dtype(dtype)
    if d is None:
        d = out.dtype if out is not None else (
            D.int64 if all(isinstance(v, int) for v in (start, end, step))
            else D.get_default_dtype())
    n = _arange_size(start, end, step, d)
    if d.category == D._FLOAT:
        arr = _arange_float(float(start), float(step), n, d)
    elif d is D.int64 and step == 1:
        arr = np.arange(int(start), int(start) + n, dtype=np.int64)
    else:
        arr = (int(start) + int(step) * np.arange(n, dtype=np.int64)).astype(d.np, copy=False)
    return _result(arr, out, requires_grad)


def _check_steps(steps) -> int:
    if isinstance(steps, Tensor):
        steps = steps.item()
    if not _int_like(steps):
        raise TypeError(f"linspace(): argument 'steps' (position 3) must be int, not "
                        f"{type(steps).__name__}")
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


def _linspace_values(start, end, n: int, d: D.dtype) -> np.ndarray:
    """torch's linspace: the first half counts up from start, the second down from end."""
    s_val, e_val = checked_scalar(start, d), checked_scalar(end, d)  # Scalar.to<T>() checks
    if n == 1:
        return np.array([s_val], d.np)
    i = np.arange(n, dtype=np.int64)
    half = n // 2
    up = i < half
    back = (n - 1 - i)
    if d.category == D._INT:
        s, e = int(s_val), int(e_val)
        step = (float(e) - float(s)) / (n - 1)
        vals = np.where(up, fma64(step, i, float(s)), fma64(-step, back, float(e)))
        return np.trunc(vals).astype(d.np)
    if d is D.float64:
        s, e = float(start), float(end)
        step = (e - s) / (n - 1)
        fi = i.astype(np.float64)
        return np.where(up, fma_index(step, fi, s, n), fma_index(-step, n - 1 - fi, e, n))
    if d is D.float32:
        s, e = np.float32(start), np.float32(end)
        step = np.float32((e - s) / np.float32(n - 1))
        return np.where(up, _fma32(step, i, s), _fma32(-step, back, e))
    # float16 / bfloat16 / float8: every operation rounds to the dtype (c10's Half arithmetic)
    t = d.np.type
    s, e = s_val, e_val
    step = t(t(e - s) / t(n - 1))
    fwd = (s + (step * i.astype(d.np)).astype(d.np)).astype(d.np)
    bwd = (e - (step * back.astype(d.np)).astype(d.np)).astype(d.np)
    return np.where(up, fwd, bwd)


def linspace(start, end, steps, *, out: Tensor | None = None, dtype: D.dtype | None = None,
             layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False
             ) -> Tensor:
    n = _check_steps(steps)
    start, end = _number(start), _number(end)
    _check_device(device)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    arr = np.empty(0, d.np) if n == 0 else _linspace_values(start, end, n, d).astype(d.np)
    return _result(arr, out, requires_grad)


def logspace(start, end, steps, base: float = 10.0, *, out: Tensor | None = None,
             dtype: D.dtype | None = None, layout=None, device=None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    n = _check_steps(steps)
    start, end = _number(start), _number(end)
    _check_device(device)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    if n == 0:
        arr = np.empty(0, d.np)
    elif n == 1:
        arr = np.array([float(base) ** float(start)])
    else:
        # exponents in float64 from start / end in the output dtype, both halves as linspace
        s = float(scalar_as(start, d)) if d.category == D._FLOAT else float(int(start))
        e = float(scalar_as(end, d)) if d.category == D._FLOAT else float(int(end))
        step = (e - s) / (n - 1)
        i = np.arange(n, dtype=np.float64)
        exps = np.where(i < n // 2, fma64(step, i, s), fma64(-step, n - 1 - i, e))
        arr = np.power(float(base), exps)
    with np.errstate(over="ignore", invalid="ignore"):
        arr = cast_array(np.asarray(arr, np.float64), d) if d.category == D._FLOAT \
            else arr.astype(d.np)
    return _result(arr, out, requires_grad)


# --- registration ---------------------------------------------------------------------------

register_method("new_zeros", _new_factory(zeros, "new_zeros"))
register_method("new_ones", _new_factory(ones, "new_ones"))
register_method("new_empty", _new_factory(empty, "new_empty"))
register_method("new_full", new_full)
register_method("new_tensor", new_tensor)
register_method("new_empty_strided", new_empty_strided)


def _register_legacy_new() -> None:
    from retrograd._legacy import new

    register_method("new", new)


_register_legacy_new()

for _f in (tensor, as_tensor, asarray, from_numpy, scalar_tensor, zeros, ones, empty, full,
           empty_strided, eye, zeros_like, ones_like, empty_like, full_like, arange, linspace,
           logspace):
    register(_f.__name__, _f)
register("finfo", D.finfo)
register("iinfo", D.iinfo)


def _register_printing() -> None:
    from retrograd import _tensor_str

    register("set_printoptions", _tensor_str.set_printoptions)


_register_printing()
