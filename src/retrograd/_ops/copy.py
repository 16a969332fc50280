"""Copies and conversions: clone, contiguous, to/type casts, copy_ (CopyBackwards)."""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._device import checked as checked_device
from retrograd._device import device as Device
from retrograd._memory_format import as_format, copy_as, is_channels_last
from retrograd._ops.registry import op, register_method
from retrograd._tensor import Tensor, _wrap


def _clone(a, memory_format=None):
    if memory_format is None or memory_format == "preserve_format":
        out = a.copy(order="K")
        if 1 in a.shape and out.strides != a.strides:
            # NumPy re-derives the strides of size-1 dims; torch keeps them (channels_last)
            from retrograd._ops.kernels.creation import empty_like_array

            out = empty_like_array(a, a.dtype)
            np.copyto(out, a)
        return out
    if memory_format == "contiguous_format":
        return np.array(a, copy=True, order="C")
    return copy_as(a, as_format(memory_format))


clone = op("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", _clone,
           grads={"self": lambda grad: grad})


def _to_copy_forward(a, dtype, memory_format=None):
    from retrograd._ops.kernels.creation import cast_array

    if memory_format is not None:
        if memory_format == "preserve_format":
            return _clone(a) if dtype is None else cast_array(a, dtype)
        return copy_as(a if dtype is None else cast_array(a, dtype), memory_format)
    if dtype is None:
        return a.copy(order="K")
    return cast_array(a, dtype)


_to_copy = op("_to_copy(Tensor self, *, ScalarType? dtype=None, "
              "MemoryFormat? memory_format=None) -> Tensor", _to_copy_forward,
              grads={"self": lambda grad, self_dtype: grad.to(self_dtype)},
              function=False, method=False)


def _dtype_arg(x):
    if isinstance(x, D.dtype):
        return x
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, str):
        name = x.split(".")[-1]
        if name in D._NAMED:
            return D._NAMED[name]
        legacy = {d._legacy: d for d in D._ALL}
        if name in legacy:
            return legacy[name]
        return None  # a device string ("cpu")
    if x is float:
        return D.float64
    if x is int:
        return D.int64
    if x is bool:
        return D.bool
    return None


_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n")


def invalid_to_arguments(args: tuple) -> TypeError:
    """torch's error for positional arguments of Tensor.to / Module.to it cannot read."""
    from retrograd._device import device

    def name(a):
        if isinstance(a, D.dtype):
            return "torch.dtype"
        if isinstance(a, device):
            return "torch.device"
        return "Tensor" if isinstance(a, Tensor) else type(a).__name__

    got = ", ".join(name(a) for a in args)
    return TypeError(f"to() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{_TO_SIGNATURES}")


def to(self: Tensor, *args, dtype=None, device=None, copy: bool = False, non_blocking=False,
       memory_format=None) -> Tensor:
    """Tensor.to(dtype) / to(device) / to(other) / to(device, dtype), each optionally followed
    by non_blocking and copy. A device other than the CPU (or the meta device) raises, as
    `.cuda()` does; an argument of no such kind raises torch's TypeError."""
    flags = []  # positional non_blocking, copy
    for a in args:
        d = _dtype_arg(a)
        if d is not None:
            dtype = d
        elif type(a) is bool:
            flags.append(a)
        elif isinstance(a, (str, int, Device)):
            checked_device(a)  # raises for devices retrograd does not have
        elif a is not None and not isinstance(a, float):  # (torch accepts a float here)
            raise invalid_to_arguments(args)
    if len(flags) > 2:
        raise invalid_to_arguments(args)
    copy = copy or (len(flags) == 2 and flags[1])
    if device is not None:
        checked_device(device)
    if memory_format is not None:
        return _to_format(self, dtype, copy, as_format(memory_format))
    if dtype is None or (dtype.np == self._data.dtype and not copy):
        return self.clone() if copy else self
    return _to_copy(self, dtype=dtype)


def _to_format(self: Tensor, dtype, copy: bool, fmt) -> Tensor:
    """to(..., memory_format=): one copy (ToCopyBackward0) unless nothing changes."""
    same_dtype = dtype is None or dtype.np == self._data.dtype
    if same_dtype and not copy and (fmt == "preserve_format" or self.is_contiguous(fmt)):
        return self
    return _to_copy(self, dtype=None if same_dtype else dtype, memory_format=fmt)


register_method("to", to)
for _name, _dt in (("float", D.float32), ("double", D.float64), ("half", D.float16),
                   ("bfloat16", D.bfloat16), ("int", D.int32), ("long", D.int64),
                   ("short", D.int16), ("bool", D.bool), ("byte", D.uint8), ("char", D.int8)):
    register_method(_name, (lambda d: lambda self, memory_format=None: to(self, d))(_dt))


def type_as(self: Tensor, other: Tensor) -> Tensor:
    return to(self, other.dtype)


register_method("type_as", type_as)


def contiguous(self: Tensor, memory_format=None) -> Tensor:
    if memory_format is not None and is_channels_last(memory_format):
        if self.is_contiguous(memory_format):
            return self
        return clone(self, memory_format=as_format(memory_format))
    if self.is_contiguous():
        return self
    return clone(self, memory_format="contiguous_format")


register_method("contiguous", contiguous)


def cpu(self: Tensor, memory_format=None) -> Tensor:
    return self


register_method("cpu", cpu)


def _other_device(name: str):
    def move(self: Tensor, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
        from retrograd._device import device as make_device

        make_device(name)  # raises: retrograd computes on the CPU only
        return self

    move.__name__ = move.__qualname__ = name
    return move


for _name in ("cuda", "xpu", "mtia", "ipu"):
    register_method(_name, _other_device(_name))


def _copy_forward(self_arr, src):
    try:
        np.copyto(self_arr, src, casting="unsafe")
    except ValueError:
        # src must broadcast to self's shape: torch's error for what does not
        from retrograd._ops.layout import broadcast_error, inplace_shape_error

        err = broadcast_error(self_arr.shape, np.shape(src))
        if err is None:
            err = inplace_shape_error(self_arr.shape, np.broadcast_shapes(self_arr.shape,
                                                                          np.shape(src)))
        raise err from None


copy_ = op("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
           lambda a, src, non_blocking: _copy_forward(a, src), node="CopyBackwards",
           grads={"self": lambda grad: _zeros_like(grad),
                  "src": lambda grad, src_dtype: grad.to(src_dtype)}, function=False)


def _zeros_like(grad: Tensor) -> Tensor:
    from retrograd._ops.creation import zeros_like

    return zeros_like(grad)


def copy_into_new(src: Tensor, empty: np.ndarray) -> Tensor:
    """`empty.copy_(src)` with history: the result's grad_fn is CopyBackwards."""
    return copy_(_wrap(empty), src)


def strided_like(grad: Tensor, shape: tuple, strides: tuple) -> Tensor:
    """A fresh tensor of `shape` laid out with `strides`, holding grad (CopySlices' buffer)."""
    buf = buffer_strided(shape, strides, grad._data.dtype)
    if grad._requires_grad:
        return copy_into_new(grad, buf)
    np.copyto(buf, grad._data)
    return _wrap(buf)


def buffer_strided(shape: tuple, strides: tuple, np_dtype) -> np.ndarray:
    """An uninitialised array with the given element strides, over a buffer that spans them
    (as torch's empty_strided; row-major where a stride is negative)."""
    from retrograd._ops.kernels.creation import empty_strided_array

    if any(s < 0 for s in strides):
        return np.empty(shape, np_dtype)
    return empty_strided_array(shape, strides, np_dtype)
