"""Creating tensors: from data (tensor, as_tensor, from_numpy), filled (zeros, ones, full, empty,
eye, empty_strided), ranges (arange, linspace, logspace), the *_like functions and the
Tensor.new_* methods.

dtype inference follows torch: Python floats give the default dtype, ints int64, bools bool,
NumPy arrays and scalars keep their dtype, and the elements of a sequence are combined with
promote_types. Where torch rounds through float32 (float64 -> float16 / bfloat16 / float8) or
computes a range in a particular order (arange's vectorised kernel, linspace's two halves), the
code below does the same so values match bit for bit.

The NumPy kernels the declarations run are in kernels/creation.py.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._layout import check_layout
from retrograd._memory_format import as_format, empty_array
from retrograd._ops import dispatch
from retrograd._ops.kernels.creation import (
    BYTE_ORDER,
    NEGATIVE_STRIDES,
    _arange_float,
    _arange_size,
    _check_numpy_layout,
    _float_dtype,
    _fma32,
    _from_python,
    _is_seq,
    _numpy_dtype,
    as_dtype,
    cast_array,
    check_fits,
    copy_array,
    empty_like_array,
    empty_strided_array,
    fma64,
    fma_index,
)
from retrograd._ops.registry import register, register_method
from retrograd._tensor import Size, Tensor, _wrap

# --- messages ---------------------------------------------------------------------------------

STRIDES_NOT_MULTIPLE = ("given numpy array strides not a multiple of the element byte size. Copy "
                        "the numpy array to reallocate the memory.")
NOT_WRITABLE = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
    "This means writing to this tensor will result in undefined behavior. You may want to copy "
    "the array to protect its data or make it writable before converting it to a tensor. This "
    "type of warning will be suppressed for the rest of this program.")
COPY_CONSTRUCT = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")
NEGATIVE_DIM = "Trying to create tensor with negative dimension {}: {}"
ONE_ELEMENT = "only one element tensors can be converted to Python scalars"

_warned_not_writable = False


# --- small helpers ----------------------------------------------------------------------------


def _check_device(device, layout=None) -> None:
    check_layout(layout)
    if device is not None and not (device == "cpu" or getattr(device, "type", None) == "cpu"):
        from retrograd._device import checked

        checked(device)  # raises for devices retrograd does not have


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


# --- scalar conversion with torch's overflow checks -------------------------------------------


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
    check_fits(value, d)
    return scalar_as(value, d)


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


def _tensors_to_scalars(obj):
    """Tensors inside a sequence are scalars to torch.tensor (one element each)."""
    if isinstance(obj, Tensor):
        if obj._data.size != 1:
            raise ValueError(ONE_ELEMENT)
        return obj.item()
    if isinstance(obj, (list, tuple)):
        return [_tensors_to_scalars(x) for x in obj]
    return obj


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
        _ws.warn(COPY_CONSTRUCT, UserWarning, stacklevel=2)
    _check_device(device)
    return _finish(to_numpy_array(data, dtype), requires_grad)


def scalar_tensor(s, *, dtype: D.dtype | None = None, device=None, requires_grad: bool = False,
                  layout=None, pin_memory: bool = False) -> Tensor:
    _check_device(device, layout)
    d = as_dtype(dtype) or D.get_default_dtype()
    return _finish(np.array(scalar_as(s, d)), requires_grad)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """torch.from_numpy: a tensor sharing the array's memory."""
    global _warned_not_writable
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt = ndarray.dtype
    if dt not in D._FROM_NP:
        if dt.kind in "biuf" and not dt.isnative:
            raise ValueError(BYTE_ORDER)
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
        _ws.warn(NOT_WRITABLE, UserWarning, stacklevel=2)
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


# The kernels of the plain factories (no out=, no requires_grad): each makes a fresh array from
# plain values, so a compiled graph can make it again at every call (NOTE [Factories in compiled
# graphs]); _made reports the array to the thread's dispatch modes.
def _zeros_kernel(shape: tuple, np_dtype: np.dtype) -> np.ndarray:
    return np.zeros(shape, np_dtype)


def _ones_kernel(shape: tuple, np_dtype: np.dtype) -> np.ndarray:
    return np.ones(shape, np_dtype)


def _empty_kernel(shape: tuple, np_dtype: np.dtype) -> np.ndarray:
    return np.empty(shape, np_dtype)


def _full_kernel(shape: tuple, value, np_dtype: np.dtype) -> np.ndarray:
    return np.full(shape, value, np_dtype)


def _laid_out_kernel(shape: tuple, strides: tuple, np_dtype: np.dtype, value) -> np.ndarray:
    """An array with the given element strides (a *_like result), filled with `value` unless
    it is None (empty_like)."""
    out = empty_strided_array(shape, strides, np_dtype)
    if value is not None:
        out.fill(value)
    return out


FACTORY_KERNELS = (_zeros_kernel, _ones_kernel, _empty_kernel, _full_kernel, _laid_out_kernel)


def _made(kernel, *args) -> np.ndarray:
    out = kernel(*args)
    if dispatch.mode_stack:
        dispatch.tensor_made(kernel, args, out)
    return out


def _factory(kernel, shape: tuple, d: D.dtype, out, requires_grad: bool, *fill) -> Tensor:
    np_dtype = np.dtype(d.np)
    if out is None and not requires_grad:
        return _finish(_made(kernel, shape, *fill, np_dtype), False)
    return _result(kernel(shape, *fill, np_dtype), out, requires_grad)


def _like_made(input: Tensor, dtype, memory_format, requires_grad: bool, value) -> Tensor:
    """empty_like (value None), zeros_like, ones_like, full_like: laid out as _like lays out;
    a callable value is called with the result's dtype."""
    arr = _like(input, dtype, memory_format)
    if callable(value):
        value = value(D.from_numpy_dtype(arr.dtype))
    args = (arr.shape, tuple(s // arr.itemsize for s in arr.strides), arr.dtype, value)
    if requires_grad:
        return _finish(_laid_out_kernel(*args), True)
    return _finish(_made(_laid_out_kernel, *args), False)


def zeros(*size, out: Tensor | None = None, dtype: D.dtype | None = None, layout=None,
          device=None, pin_memory: bool = False, requires_grad: bool = False, names=None,
          **kwargs) -> Tensor:
    shape = parse_size("zeros", size, kwargs, "zeros: Dimension size must be non-negative.")
    _check_device(device, layout)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    return _factory(_zeros_kernel, shape, d, out, requires_grad)


def ones(*size, out: Tensor | None = None, dtype: D.dtype | None = None, layout=None,
         device=None, pin_memory: bool = False, requires_grad: bool = False, names=None,
         **kwargs) -> Tensor:
    shape = parse_size("ones", size, kwargs)
    _check_device(device, layout)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    return _factory(_ones_kernel, shape, d, out, requires_grad)


def empty(*size, out: Tensor | None = None, dtype: D.dtype | None = None, layout=None,
          device=None, pin_memory: bool = False, requires_grad: bool = False,
          memory_format=None, names=None, **kwargs) -> Tensor:
    shape = parse_size("empty", size, kwargs)
    _check_device(device, layout)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    if memory_format is not None:
        return _result(empty_array(shape, d.np, as_format(memory_format)), out, requires_grad)
    return _factory(_empty_kernel, shape, d, out, requires_grad)


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
    _check_device(device, layout)
    d = as_dtype(dtype) or (out.dtype if out is not None else _fill_dtype(fill_value))
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _factory(_full_kernel, shape, d, out, requires_grad, checked_scalar(value, d))


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
    _check_device(device, layout)
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
    _check_device(device, layout)
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
    check_layout(layout)
    return _like_made(input, dtype, memory_format, requires_grad, None)


def zeros_like(input: Tensor, *, dtype: D.dtype | None = None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None, pin_memory: bool = False
               ) -> Tensor:
    check_layout(layout)
    return _like_made(input, dtype, memory_format, requires_grad, 0)


def ones_like(input: Tensor, *, dtype: D.dtype | None = None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None, pin_memory: bool = False
              ) -> Tensor:
    check_layout(layout)
    return _like_made(input, dtype, memory_format, requires_grad, 1)


def full_like(input: Tensor, fill_value, *, dtype: D.dtype | None = None, layout=None,
              device=None, requires_grad: bool = False, memory_format=None,
              pin_memory: bool = False) -> Tensor:
    check_layout(layout)
    _check_fill("full_like", fill_value)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _like_made(input, dtype, memory_format, requires_grad,
                      lambda d: checked_scalar(value, d))


# --- Tensor.new_* ---------------------------------------------------------------------------


def _new_factory(fn, name: str):
    def method(self: Tensor, *size, dtype: D.dtype | None = None, device=None,
               requires_grad: bool = False, layout=None, pin_memory: bool = False, **kwargs):
        shape = parse_size(name, size, kwargs)
        return fn(shape, dtype=as_dtype(dtype) or self.dtype, device=device,
                  requires_grad=requires_grad, layout=layout)

    method.__name__ = method.__qualname__ = name
    return method


def new_full(self: Tensor, size, fill_value, *, dtype: D.dtype | None = None, device=None,
             requires_grad: bool = False, layout=None, pin_memory: bool = False) -> Tensor:
    return full(size, fill_value, dtype=as_dtype(dtype) or self.dtype, device=device,
                requires_grad=requires_grad, layout=layout)


def new_tensor(self: Tensor, data, *, dtype: D.dtype | None = None, device=None,
               requires_grad: bool = False, layout=None, pin_memory: bool = False) -> Tensor:
    if isinstance(data, Tensor):
        _ws.warn(COPY_CONSTRUCT.replace("torch.tensor(sourceTensor)",
                                             "tensor.new_tensor(sourceTensor)"),
                 UserWarning, stacklevel=2)
    check_layout(layout)
    d = as_dtype(dtype) or self.dtype
    return _finish(to_numpy_array(data, d), requires_grad)


def new_empty_strided(self: Tensor, size, stride, *, dtype: D.dtype | None = None, device=None,
                      requires_grad: bool = False, layout=None, pin_memory: bool = False
                      ) -> Tensor:
    return empty_strided(size, stride, dtype=as_dtype(dtype) or self.dtype, device=device,
                         requires_grad=requires_grad, layout=layout)


# --- ranges ---------------------------------------------------------------------------------
# the float rounding of arange's values: kernels/creation.py (fma_index)


def _number(x):
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    return x


def empty_permuted(size, physical_layout, *, dtype: D.dtype | None = None, layout=None,
                   device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.empty_permuted: an uninitialized dense tensor of `size` whose dimensions lie in
    memory in the order `physical_layout` gives (outermost first)."""
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    seen: set = set()
    for i, d in enumerate(order):
        if not 0 <= d < len(size):
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {len(size) - 1}, but got "
                f"{d} at index {i}).  NB: negative dims not currently supported; file an issue "
                "if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    _check_device(device, layout)
    d_type = as_dtype(dtype) or D.get_default_dtype()
    physical = np.empty([size[d] for d in order], d_type.np)
    result = _wrap(physical.transpose([order.index(d) for d in range(len(size))]))
    if requires_grad:
        result.requires_grad_(True)
    return result


register("empty_permuted", empty_permuted)


RANGE_DEPRECATED = (
    "retrograd.range is deprecated and will be removed in a future release because its "
    "behavior is inconsistent with Python's range builtin. Instead, use retrograd.arange, which "
    "produces values in [start, end).")


def range_inclusive(start, end, step=1, *, out: Tensor | None = None,
                    dtype: D.dtype | None = None, layout=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """torch.range (deprecated): start, start + step, ... up to end included, in the default
    float dtype unless `dtype` says otherwise."""
    from retrograd import _warning_site as _ws

    _ws.warn(RANGE_DEPRECATED, UserWarning, stacklevel=2)
    start, end, step = _number(start), _number(end), _number(step)
    _check_device(device, layout)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    d = as_dtype(dtype) or D.get_default_dtype()
    n = int((end - start) // step) + 1
    values = (start + np.arange(n, dtype=np.float64) * step).astype(d.np)
    result = _wrap(values)
    if out is not None:
        from retrograd._ops.out_variant import write_out

        write_out("range", result, out, 3)
        return out
    if requires_grad:
        result.requires_grad_(True)
    return result


register("range", range_inclusive)


def arange(start, end=None, step=1, *, out: Tensor | None = None, dtype: D.dtype | None = None,
           layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False
           ) -> Tensor:
    """torch.arange with torch's length and torch's float rounding."""
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    _check_device(device, layout)
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
    _check_device(device, layout)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    arr = np.empty(0, d.np) if n == 0 else _linspace_values(start, end, n, d).astype(d.np)
    return _result(arr, out, requires_grad)


def logspace(start, end, steps, base: float = 10.0, *, out: Tensor | None = None,
             dtype: D.dtype | None = None, layout=None, device=None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    n = _check_steps(steps)
    start, end = _number(start), _number(end)
    _check_device(device, layout)
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
