"""retrograd.save / retrograd.load in a safe format: nothing in a file is ever executed.

A checkpoint is an uncompressed zip archive holding
  - `retrograd/manifest.json`: the saved object as JSON, with tagged objects
    ({"$": "tensor", ...}, {"$": "dict", "v": [[key, value], ...]}, ...) for what JSON lacks;
  - `retrograd/data/<i>.npy`: one array per distinct tensor (or NumPy array/scalar), written
    with numpy.save(allow_pickle=False). bfloat16 and float8 arrays are stored as raw unsigned
    integers of their width; the manifest names the dtype.
Loading decodes only this closed set of types (weights_only=True semantics): no pickle, no
imports, no callables. A tensor saved twice in one object is loaded as one tensor; views are
saved as copies of their own data (storage sharing between distinct tensors is not kept).
A damaged file (truncated, random bytes, edited manifest) raises RuntimeError.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
import os
import struct
import zipfile
import zlib
from collections import Counter, OrderedDict
from typing import Any, BinaryIO

import numpy as np

from retrograd import _dtype as D
from retrograd import _safe_globals as G
from retrograd._device import device as Device
from retrograd._safe_globals import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from retrograd._tensor import Size, Tensor, _wrap

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

_MAGIC = "retrograd-checkpoint"
_VERSION = 1
_MANIFEST = "retrograd/manifest.json"
_DATA = "retrograd/data/{}.npy"
_MAX_DEPTH = 500  # nesting limit, so a crafted manifest cannot exhaust the stack
_MAX_NPY_HEADER = 1 << 16
# dtypes NumPy's .npy format cannot describe: stored as raw unsigned integers of their width
_RAW_VIEW = {"bfloat16": np.uint16, "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8}
_MAPPINGS = {dict: "dict", OrderedDict: "odict", Counter: "counter"}
_MAPPING_TYPES = {v: k for k, v in _MAPPINGS.items()}


class _Encoder:
    """Turns an object into a JSON-able manifest, collecting the arrays to write."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self._tensor_ids: dict[int, tuple[int, Any]] = {}  # id(obj) -> (index, obj kept alive)

    def encode(self, obj: Any, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise ValueError("retrograd.save: object nested too deeply (or self-referencing)")
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        t = type(obj)
        if t is int:
            return obj
        if t is float:
            return obj if math.isfinite(obj) else {"$": "float", "v": repr(obj)}
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, (np.ndarray, np.generic)):
            return self._numpy(obj)
        if isinstance(obj, D.dtype):
            return {"$": "dtype", "v": obj.name}
        if isinstance(obj, Device):
            return {"$": "device", "v": str(obj)}
        return self._container(obj, depth)

    def _container(self, obj: Any, depth: int) -> Any:
        t = type(obj)
        enc = self.encode
        if t in _MAPPINGS:
            out = {"$": _MAPPINGS[t],
                   "v": [[enc(k, depth + 1), enc(v, depth + 1)] for k, v in obj.items()]}
            metadata = getattr(obj, "_metadata", None)  # Module.state_dict's version info
            if metadata is not None and t is OrderedDict:
                out["meta"] = enc(metadata, depth + 1)
            return out
        if t is Size:
            return {"$": "size", "v": [int(s) for s in obj]}
        if t in (list, tuple, set, frozenset):
            return {"$": t.__name__, "v": [enc(v, depth + 1) for v in obj]}
        if t is int or isinstance(obj, int):  # int subclasses (IntEnum, ...) save as int
            return int(obj)
        if isinstance(obj, float):
            return self.encode(float(obj), depth)
        if t is complex:
            return {"$": "complex", "re": self.encode(obj.real), "im": self.encode(obj.imag)}
        if t in (bytes, bytearray):
            return {"$": "bytes", "v": base64.b64encode(bytes(obj)).decode("ascii")}
        return self._allowed(obj, depth)

    def _allowed(self, obj: Any, depth: int) -> Any:
        """Objects the safe-globals allowlist admits: allowed classes / functions by name, and
        instances of allowed classes as name plus state."""
        from enum import Enum

        t = type(obj)
        name = G.name_if_allowed(obj)
        if name is not None:
            return {"$": "global", "name": name}
        name = G.name_if_allowed(t)
        if name is not None:
            state = obj.value if isinstance(obj, Enum) else G.object_state(obj)
            return {"$": "object", "cls": name, "state": self.encode(state, depth + 1)}
        raise TypeError(f"retrograd.save: cannot save an object of type {t.__module__}."
                        f"{t.__qualname__}; supported: tensors, NumPy arrays, numbers, str, "
                        "bytes, None, dtypes, devices, dicts/lists/tuples/sets of them, and "
                        "instances of classes allowed with "
                        "retrograd.serialization.add_safe_globals")

    def _add_array(self, key: Any, arr: np.ndarray) -> int:
        seen = self._tensor_ids.get(id(key))
        if seen is not None:
            return seen[0]
        i = len(self.arrays)
        self.arrays.append(arr)
        self._tensor_ids[id(key)] = (i, key)
        return i

    def _tensor(self, t: Tensor) -> dict:
        d = t.dtype
        out = {"$": "tensor", "i": self._add_array(t, t._data), "dtype": d.name,
               "shape": list(t._data.shape), "requires_grad": bool(t._requires_grad)}
        if type(t) is not Tensor and _is_parameter(t):
            out["parameter"] = True
        return out

    def _numpy(self, a: np.ndarray | np.generic) -> dict:
        arr = np.asarray(a)
        if arr.dtype.hasobject:
            raise TypeError("retrograd.save: cannot save a NumPy array of Python objects")
        kind = "ndarray" if isinstance(a, np.ndarray) else "npscalar"
        return {"$": kind, "i": self._add_array(a, arr), "dtype": arr.dtype.str,
                "shape": list(arr.shape)}


def _is_parameter(t: Tensor) -> bool:
    from retrograd.nn.parameter import Parameter

    return isinstance(t, Parameter)


def _storage_array(arr: np.ndarray) -> np.ndarray:
    """The array as .npy can hold it (narrow float types as raw unsigned integers)."""
    view = _RAW_VIEW.get(arr.dtype.name)
    if view is None:
        return arr
    return np.ascontiguousarray(arr).view(view)


def _open_for_write(f: Any) -> tuple[BinaryIO, bool]:
    if isinstance(f, (str, os.PathLike)):
        return open(f, "wb"), True
    if not hasattr(f, "write"):
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'write'")
    return f, False


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False
         ) -> None:
    """Saves tensors (and dicts/lists/tuples of tensors, numbers, strings, None, dtypes,
    NumPy arrays) to a path or a writable binary file object, in retrograd's safe format."""
    enc = _Encoder()
    try:
        root = enc.encode(obj)
    except RecursionError:
        raise ValueError("retrograd.save: object nested too deeply (or self-referencing)") \
            from None
    manifest = json.dumps({"magic": _MAGIC, "version": _VERSION, "root": root},
                          allow_nan=False, ensure_ascii=True)
    stream, owned = _open_for_write(f)
    try:
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED,
                             allowZip64=True) as zf:
            zf.writestr(_MANIFEST, manifest)
            for i, arr in enumerate(enc.arrays):
                with zf.open(_DATA.format(i), "w", force_zip64=True) as out:
                    np.lib.format.write_array(out, _storage_array(arr), allow_pickle=False)
    finally:
        if owned:
            stream.close()


# --- loading ----------------------------------------------------------------------------------

class _CorruptFile(Exception):
    """Raised inside load for anything malformed; turned into one RuntimeError."""


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise _CorruptFile(what)


class _Decoder:
    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        self.names = set(zf.namelist())
        self.loaded: dict[int, Any] = {}

    def decode(self, node: Any, depth: int = 0) -> Any:
        _expect(depth <= _MAX_DEPTH, "manifest nested too deeply")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):  # bare JSON arrays are never written
            raise _CorruptFile("unexpected JSON array in manifest")
        _expect(isinstance(node, dict) and isinstance(node.get("$"), str), "bad manifest node")
        tag = node["$"]
        handler = _TAGS.get(tag)
        _expect(handler is not None, f"unknown manifest tag {tag!r}")
        return handler(self, node, depth)

    def items(self, node: dict, depth: int) -> list:
        v = node.get("v")
        _expect(isinstance(v, list), "container without a value list")
        return [self.decode(x, depth + 1) for x in v]

    def mapping(self, node: dict, depth: int) -> Any:
        pairs = node.get("v")
        _expect(isinstance(pairs, list), "mapping without items")
        out = _MAPPING_TYPES[node["$"]]()
        for pair in pairs:
            _expect(isinstance(pair, list) and len(pair) == 2, "bad mapping item")
            key = self.decode(pair[0], depth + 1)
            try:
                out[key] = self.decode(pair[1], depth + 1)
            except TypeError as e:  # an unhashable key
                raise _CorruptFile(f"bad mapping key: {e}") from None
        if "meta" in node:
            _expect(node["$"] == "odict", "metadata on a mapping that cannot hold it")
            out._metadata = self.decode(node["meta"], depth + 1)
        return out

    def array(self, node: dict) -> np.ndarray:
        i = node.get("i")
        _expect(type(i) is int and i >= 0, "bad array index")
        if i in self.loaded:
            return self.loaded[i]
        name = _DATA.format(i)
        _expect(name in self.names, f"missing array {name}")
        shape = node.get("shape")
        _expect(isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape),
                "bad shape")
        info = self.zf.getinfo(name)
        with self.zf.open(info) as fh:
            version = np.lib.format.read_magic(fh)
            _expect(version in ((1, 0), (2, 0), (3, 0)), "bad .npy version")
            hdr = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                   else np.lib.format.read_array_header_2_0)
            arr_shape, fortran, dtype = hdr(fh, max_header_size=_MAX_NPY_HEADER)
            _expect(not dtype.hasobject, "object array in checkpoint")
            _expect(list(arr_shape) == shape, "array shape differs from the manifest")
            nbytes = math.prod(arr_shape) * dtype.itemsize
            _expect(info.file_size - fh.tell() == nbytes, "array data has the wrong size")
            data = fh.read(nbytes)
        _expect(len(data) == nbytes, "array data truncated")
        arr = np.frombuffer(data, dtype=dtype).copy()
        arr = arr.reshape(arr_shape, order="F" if fortran else "C")
        self.loaded[i] = arr
        return arr

    def tensor(self, node: dict, depth: int) -> Tensor:
        key = ("tensor", node.get("i"))
        if key in self.loaded:
            return self.loaded[key]
        name = node.get("dtype")
        d = D._NAMED.get(name) if isinstance(name, str) else None
        _expect(d is not None, f"unknown dtype {name!r}")
        arr = self.array(node)
        raw = _RAW_VIEW.get(d.name)
        if raw is not None:
            _expect(arr.dtype == np.dtype(raw), "raw array of the wrong width")
            arr = arr.view(d.np)
        _expect(arr.dtype == d.np, "array dtype differs from the manifest")
        t = _wrap(arr)
        requires_grad = node.get("requires_grad", False)
        _expect(isinstance(requires_grad, bool), "bad requires_grad")
        _expect(not requires_grad or d.is_floating_point, "requires_grad on a non-float tensor")
        if node.get("parameter") is True:
            from retrograd.nn.parameter import Parameter

            t = Parameter(t, requires_grad=requires_grad)
        else:
            t._requires_grad = requires_grad
        self.loaded[key] = t
        return t

    def numpy(self, node: dict, depth: int) -> Any:
        arr = self.array(node)
        _expect(node.get("dtype") == arr.dtype.str, "array dtype differs from the manifest")
        if node["$"] == "npscalar":
            _expect(arr.shape == (), "NumPy scalar with a shape")
            return arr[()]
        return arr

    def float_special(self, node: dict, depth: int) -> float:
        v = node.get("v")
        _expect(v in ("nan", "inf", "-inf"), "bad float")
        return float(v)

    def complex_(self, node: dict, depth: int) -> complex:
        re, im = self.decode(node.get("re"), depth + 1), self.decode(node.get("im"), depth + 1)
        _expect(isinstance(re, float) and isinstance(im, float), "bad complex")
        return complex(re, im)

    def bytes_(self, node: dict, depth: int) -> bytes:
        v = node.get("v")
        _expect(isinstance(v, str), "bad bytes")
        return base64.b64decode(v.encode("ascii"), validate=True)

    def dtype(self, node: dict, depth: int) -> D.dtype:
        d = D._NAMED.get(node.get("v")) if isinstance(node.get("v"), str) else None
        _expect(d is not None, "unknown dtype")
        return d

    def device(self, node: dict, depth: int) -> Device:
        _expect(isinstance(node.get("v"), str), "bad device")
        return Device(node["v"])

    def size(self, node: dict, depth: int) -> Size:
        v = node.get("v")
        _expect(isinstance(v, list) and all(type(s) is int for s in v), "bad size")
        return Size(v)

    def _lookup(self, name: Any) -> Any:
        _expect(isinstance(name, str), "bad global name")
        obj = G.allowed_by_name().get(name)
        if obj is None:
            raise _NotAllowed(G.not_allowed_message(name))
        return obj

    def global_(self, node: dict, depth: int) -> Any:
        return self._lookup(node.get("name"))

    def object_(self, node: dict, depth: int) -> Any:
        cls = self._lookup(node.get("cls"))
        _expect(isinstance(cls, type), "object of a name that is not a class")
        return G.rebuild(cls, self.decode(node.get("state"), depth + 1))

    def sequence(self, node: dict, depth: int) -> Any:
        values = self.items(node, depth)
        kind = node["$"]
        if kind == "list":
            return values
        try:
            return {"tuple": tuple, "set": set, "frozenset": frozenset}[kind](values)
        except TypeError as e:  # unhashable set members
            raise _CorruptFile(f"bad {kind}: {e}") from None


_TAGS = {
    "tensor": _Decoder.tensor, "ndarray": _Decoder.numpy, "npscalar": _Decoder.numpy,
    "dict": _Decoder.mapping, "odict": _Decoder.mapping, "counter": _Decoder.mapping,
    "list": _Decoder.sequence, "tuple": _Decoder.sequence, "set": _Decoder.sequence,
    "frozenset": _Decoder.sequence, "float": _Decoder.float_special,
    "complex": _Decoder.complex_, "bytes": _Decoder.bytes_, "dtype": _Decoder.dtype,
    "device": _Decoder.device, "size": _Decoder.size, "global": _Decoder.global_,
    "object": _Decoder.object_,
}


class _NotAllowed(Exception):
    """A checkpoint names a class or function that is not on the safe-globals allowlist."""


def _read_source(f: Any) -> tuple[Any, str]:
    """A seekable binary source for zipfile, and a name for error messages."""
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f), repr(os.fspath(f))
    if not hasattr(f, "read"):
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'read'")
    if not (hasattr(f, "seek") and f.seekable()):
        f = io.BytesIO(f.read())
    return f, "the given file object"


def _check_format(zf: zipfile.ZipFile) -> None:
    names = zf.namelist()
    if _MANIFEST not in names:
        if any(n.endswith("/data.pkl") or n == "data.pkl" for n in names):
            raise _CorruptFile("it is a PyTorch (pickle) checkpoint; retrograd.load reads only "
                               "files written by retrograd.save, and never unpickles")
        raise _CorruptFile("no retrograd manifest in the archive")


def _parse_manifest(zf: zipfile.ZipFile) -> Any:
    info = zf.getinfo(_MANIFEST)
    _expect(info.file_size <= (1 << 30), "manifest too large")
    text = zf.read(info).decode("utf-8")
    doc = json.loads(text, parse_constant=_reject_constant)
    _expect(isinstance(doc, dict) and doc.get("magic") == _MAGIC, "not a retrograd manifest")
    _expect(doc.get("version") == _VERSION,
            f"unsupported checkpoint version {doc.get('version')!r}")
    _expect("root" in doc, "manifest without a root object")
    return doc["root"]


def _reject_constant(name: str) -> Any:
    raise _CorruptFile(f"invalid JSON constant {name}")


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args: Any
         ) -> Any:
    """Loads an object saved by retrograd.save from a path or readable binary file object.

    map_location is accepted and ignored (everything lives on the CPU); weights_only is
    always in effect: only tensors, arrays, numbers, strings and containers are decoded.
    """
    source, name = _read_source(f)
    try:
        with zipfile.ZipFile(source, "r") as zf:
            _check_format(zf)
            root = _parse_manifest(zf)
            return _Decoder(zf).decode(root)
    except FileNotFoundError:
        raise
    except _NotAllowed as e:
        raise RuntimeError(f"retrograd.load: {name} holds an object retrograd does not load by "
                           f"default. {e}") from None
    except (_CorruptFile, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError,
            ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError,
            OverflowError, MemoryError, struct.error, zlib.error, binascii.Error,
            NotImplementedError) as e:
        raise RuntimeError(f"retrograd.load: {name} is not a valid retrograd checkpoint "
                           f"({type(e).__name__}: {e})") from e
