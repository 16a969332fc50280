"""Reading checkpoints written by torch.save (its zip format), as torch.load(weights_only=True)
reads them: state dicts, tensors of every real dtype, parameters, nested containers.

NOTE [Reading torch checkpoints]
A torch checkpoint is a zip of a pickle (`<name>/data.pkl`) and one raw file per storage
(`<name>/data/<key>`). The pickle is read by an unpickler whose `find_class` answers only the
names of an allowlist (the tensor and parameter rebuilders, storage classes, dtypes, Size,
device, OrderedDict and a few builtins), each mapped to retrograd's own constructor, so a
checkpoint can name no other function and no code from the file runs (Python's documented way
of restricting unpickling; torch's weights_only loader allows the same kind of names). Storages
are read once per key, so tensors that shared one in torch share memory after loading; every
view's offset, sizes and strides are checked against its storage before any array is made.
"""

from __future__ import annotations

import builtins
import codecs
import io
import math
import pickle
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd._device import device as Device
from retrograd._tensor import Size, Tensor, _wrap

# torch's typed storage classes, by name, and the dtype of their elements
_STORAGES = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
             "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
             "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
             "BoolStorage": "bool"}
_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "uint16", "uint32", "uint64", "bool", "float8_e4m3fn", "float8_e5m2", "float",
           "double", "half", "long",
           "int", "short")


class NotAllowed(Exception):
    """The pickle names a global outside the allowlist."""


class _StorageType:
    """Stands for a storage class the pickle names: only its dtype is read (None: untyped)."""

    def __init__(self, dtype: str | None) -> None:
        self.dtype = dtype


class _Storage:
    """One storage's elements, read from the archive (uint8 for an untyped storage)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def _as_dtype(dtype: Any) -> D.dtype:
    if not isinstance(dtype, D.dtype):
        raise pickle.UnpicklingError(f"expected a dtype, got {type(dtype).__name__}")
    return dtype


def _view(storage: Any, offset: int, size: Any, stride: Any, dtype: D.dtype) -> np.ndarray:
    """The array over `storage` that a tensor's offset, sizes and strides describe, after
    checking that every element it reaches lies inside the storage."""
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError("a tensor without a storage")
    base = storage.array
    if base.dtype != dtype.np:  # an untyped storage holds bytes: read them as the dtype
        if base.dtype != np.uint8 or base.size % dtype.np.itemsize:
            raise pickle.UnpicklingError("storage and tensor dtypes disagree")
        base = base.view(dtype.np)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or offset < 0 or any(s < 0 for s in size + stride):
        raise pickle.UnpicklingError("invalid tensor geometry")
    if math.prod(size) and offset + sum((n - 1) * s for n, s in zip(size, stride)) >= base.size:
        raise pickle.UnpicklingError("a tensor reaches past the end of its storage")
    if not math.prod(size):
        return np.empty(size, dtype.np)
    item = base.itemsize
    # as_strided goes through the array interface, which cannot spell ml_dtypes' types: stride
    # an unsigned view of the same width, then view the result as the dtype
    plain = base.view(np.dtype(f"u{item}")) if base.dtype.kind == "V" or base.dtype.char not in \
        np.typecodes["All"] else base
    out = np.lib.stride_tricks.as_strided(plain[offset:], size, tuple(s * item for s in stride))
    return out if plain is base else out.view(base.dtype)


def _tensor(array: np.ndarray, requires_grad: bool) -> Tensor:
    t = _wrap(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v2(storage: Any, offset: int, size: Any, stride: Any, requires_grad: bool,
                       backward_hooks: Any, metadata: Any = None) -> Tensor:
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError("a tensor without a storage")
    return _tensor(_view(storage, offset, size, stride, _dtype_of(storage)), requires_grad)


def _rebuild_tensor_v3(storage: Any, offset: int, size: Any, stride: Any, requires_grad: bool,
                       backward_hooks: Any, dtype: Any, metadata: Any = None) -> Tensor:
    return _tensor(_view(storage, offset, size, stride, _as_dtype(dtype)), requires_grad)


def _rebuild_tensor(storage: Any, offset: int, size: Any, stride: Any) -> Tensor:
    return _rebuild_tensor_v2(storage, offset, size, stride, False, None)


def _dtype_of(storage: _Storage) -> D.dtype:
    return D.from_numpy_dtype(storage.array.dtype)


def _rebuild_parameter(data: Any, requires_grad: bool, backward_hooks: Any) -> Any:
    from retrograd.nn.parameter import Parameter

    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError("a parameter without data")
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data: Any, requires_grad: bool, backward_hooks: Any,
                                  state: Any) -> Any:
    return _rebuild_parameter(data, requires_grad, backward_hooks)


def _encode(text: str, encoding: str = "latin1") -> bytes:
    """_codecs.encode, as protocol-2 pickles spell bytes: text to bytes, nothing else."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("unexpected use of _codecs.encode")
    return codecs.encode(text, encoding)


def _allowed() -> dict:
    names: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
        ("torch", "Size"): Size, ("torch", "device"): Device,
        ("torch.storage", "UntypedStorage"): _StorageType(None),
        ("torch", "UntypedStorage"): _StorageType(None),
        ("_codecs", "encode"): _encode,
    }
    for name, dtype in _STORAGES.items():
        names[("torch", name)] = _StorageType(dtype)
    for name in _DTYPES:
        names[("torch", name)] = getattr(D, name)
    for name in ("set", "frozenset", "complex", "slice", "range", "bytearray"):
        names[("builtins", name)] = getattr(builtins, name)
        names[("__builtin__", name)] = getattr(builtins, name)
    return names


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, archive: zipfile.ZipFile, prefix: str, swap: bool) -> None:
        super().__init__(io.BytesIO(data))
        self.archive, self.prefix, self.swap = archive, prefix, swap
        self.storages: dict[str, _Storage] = {}
        self.allowed = _allowed()

    def find_class(self, module: str, name: str) -> Any:
        found = self.allowed.get((module, name))
        if found is None:
            raise NotAllowed(f"Unsupported global: GLOBAL {module}.{name}")
        return found

    def persistent_load(self, pid: Any) -> _Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        _, kind, key, _location, numel = pid
        if not isinstance(kind, _StorageType) or not isinstance(key, str):
            raise pickle.UnpicklingError("unsupported storage record")
        if key not in self.storages:
            dt = np.dtype(np.uint8) if kind.dtype is None else getattr(D, kind.dtype).np
            raw = bytearray(self.archive.read(f"{self.prefix}data/{key}"))
            if len(raw) % dt.itemsize:
                raise pickle.UnpicklingError(f"storage {key} is not whole elements")
            array = np.frombuffer(raw, dtype=dt)
            if self.swap and dt.itemsize > 1:
                array = array.byteswap()
            self.storages[key] = _Storage(array)
        return self.storages[key]


def is_torch_archive(archive: zipfile.ZipFile) -> bool:
    return any(n.endswith("/data.pkl") or n == "data.pkl" for n in archive.namelist())


def decode(archive: zipfile.ZipFile) -> Any:
    """The object a torch.save zip archive holds (NOTE [Reading torch checkpoints])."""
    pkl = next(n for n in archive.namelist() if n.endswith("/data.pkl") or n == "data.pkl")
    prefix = pkl[:-len("data.pkl")]
    order = f"{prefix}byteorder"
    swap = order in archive.namelist() and archive.read(order).strip() == b"big"
    return _Unpickler(archive.read(pkl), archive, prefix, swap).load()
