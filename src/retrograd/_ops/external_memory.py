"""Tensors over memory something else holds: frombuffer (Python's buffer protocol), from_file
(a file mapped into memory) and DLPack (from_dlpack, to_dlpack, Tensor.__dlpack__), each
sharing the memory as torch does, with torch's checks and messages.

A buffer that cannot be written (bytes, a read-only map) gives a tensor that refuses in-place
writes with a clear error, where torch writes into the immutable object (README, deliberate
differences).
"""

from __future__ import annotations

import enum
import os
import warnings
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._ops.creation import _check_device, _finish, as_dtype, from_numpy
from retrograd._ops.registry import register, register_method
from retrograd._tensor import Tensor

NOT_WRITABLE_BUFFER = (
    "The given buffer is not writable, so the tensor made from it is read-only: in-place "
    "writes to it raise (clone() it for a writable copy). This warning is shown once.")
INVALID_CAPSULE = (
    "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
    "once, so you might have already constructed a tensor from it once.")
EXPORT_REQUIRES_GRAD = "Can't export tensors that require gradient, use tensor.detach()"

_warned_not_writable = False


def _warn_not_writable() -> None:
    global _warned_not_writable
    if not _warned_not_writable:
        _warned_not_writable = True
        _ws.warn(NOT_WRITABLE_BUFFER, UserWarning, stacklevel=3)


# --- frombuffer ------------------------------------------------------------------------------


def frombuffer(buffer: Any, *, dtype: D.dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-d tensor over `count` elements of `buffer` from byte `offset` (all that fit when
    count is negative), sharing its memory."""
    d = as_dtype(dtype)
    if d is None:
        raise TypeError('frombuffer() missing 1 required positional arguments: "dtype"')
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    length, item = view.nbytes, d.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % item:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({item})")
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    arr = np.frombuffer(view.cast("B"), dtype=d.np, count=count, offset=offset)
    if not arr.flags.writeable:
        _warn_not_writable()
    return _finish(arr, requires_grad)


# --- from_file -------------------------------------------------------------------------------


def from_file(filename: str, shared: bool | None = None, size: int = 0, *,
              dtype: D.dtype | None = None, layout: Any = None, device: Any = None,
              pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """`size` elements read from a file by mapping it: with shared=True writes to the tensor go
    to the file (which is created, or grown with zeros, to fit); otherwise the mapping is
    private (copy-on-write), so the file is left as it is."""
    _check_device(device, layout)
    d = as_dtype(dtype) or D.get_default_dtype()
    name = os.fspath(filename)
    nbytes = size * d.itemsize
    if nbytes < 0:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{name}>: Cannot allocate "
                           "memory (12)")
    if shared:
        with open(name, "ab") as f:  # creates the file if needed, never truncates it
            if f.seek(0, os.SEEK_END) < nbytes:
                f.truncate(nbytes)
    elif not os.path.exists(name):
        raise RuntimeError(f"unable to open file <{name}> in read-only mode: No such file or "
                           "directory (2)")
    have = os.path.getsize(name)
    if have < nbytes:
        raise RuntimeError(f"file <{name}> size <{have}> is smaller than the required mapping "
                           f"size <{nbytes}>")
    if size == 0:
        return _finish(np.empty(0, d.np), requires_grad)
    mapped = np.memmap(name, dtype=d.np, mode="r+" if shared else "c", shape=(size,))
    return _finish(np.asarray(mapped), requires_grad)  # a plain ndarray over the mapping


# --- DLPack ----------------------------------------------------------------------------------


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (retrograd's tensors are all kDLCPU)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


class _Capsule:
    """A bare DLPack capsule (to_dlpack's result) presented through the protocol NumPy reads."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple:
        return (DLDeviceType.kDLCPU, 0)


def _is_capsule(obj: Any) -> bool:
    return type(obj).__name__ == "PyCapsule"


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing the memory of any object that speaks DLPack (`__dlpack__`: NumPy arrays,
    torch tensors, ...) or of a DLPack capsule (consumed: a capsule serves once)."""
    if hasattr(ext_tensor, "__dlpack__"):
        arr = np.from_dlpack(ext_tensor)
    elif _is_capsule(ext_tensor):
        try:
            arr = np.from_dlpack(_Capsule(ext_tensor))
        except (ValueError, TypeError, BufferError):
            raise RuntimeError(INVALID_CAPSULE) from None
    else:
        raise RuntimeError(INVALID_CAPSULE)
    with warnings.catch_warnings():  # a read-only source: refused writes, as frombuffer's
        warnings.simplefilter("ignore", UserWarning)
        return from_numpy(arr)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule over the tensor's memory (torch's legacy exchange object)."""
    return tensor._data.__dlpack__()


def _dlpack(self: Tensor, stream: Any = None, *, max_version: tuple | None = None,
            dl_device: Any = None, copy: bool | None = None) -> Any:
    if self.requires_grad:
        raise BufferError(EXPORT_REQUIRES_GRAD)
    kwargs: dict[str, Any] = {} if max_version is None else {"max_version": max_version}
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return self._data.__dlpack__(stream=stream, **kwargs)


def _dlpack_device(self: Tensor) -> tuple:
    return (DLDeviceType.kDLCPU, 0)


register("frombuffer", frombuffer)
register("from_file", from_file)
register("from_dlpack", from_dlpack)
register_method("__dlpack__", _dlpack)
register_method("__dlpack_device__", _dlpack_device)
