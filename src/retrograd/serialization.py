"""retrograd.save / retrograd.load in a safe format: nothing in a file is ever executed.

A checkpoint is an uncompressed zip archive holding
  - `retrograd/manifest.json`: {"magic", "version": 2, "nodes": [...], "root": i}. Each node is
    a JSON scalar or a tagged object ({"$": "tensor", ...}, {"$": "list", "v": [j, k]}, ...)
    whose children are indices of earlier nodes, so the JSON is flat however deep the object
    is, and loading is one loop over the nodes (no recursion). An object saved twice in one
    checkpoint is one node and loads as one object.
  - `retrograd/data/<i>.npy`: the raw bytes of one storage (a block of memory that tensors
    live in) as a uint8 array, or one NumPy array/scalar, written with numpy.save(
    allow_pickle=False). A tensor node names its storage, byte offset, shape and byte strides,
    so views, tied weights and expanded tensors keep sharing memory after loading, and an
    expanded tensor costs only its base's bytes.
The uninitialized parameters and buffers of lazy modules are nodes of their own (kind, dtype,
requires_grad: they have no memory) and load as such.
Loading decodes only this closed set of types (weights_only=True semantics): no pickle, no
imports, no callables. Version 1 manifests (nested JSON, one array per tensor) still load.
A damaged or hostile file (truncated, random bytes, edited manifest, compressed entries)
raises RuntimeError; an OS error opening the file is raised as it is.
Checkpoints written by torch.save (its zip format) load too, through an unpickler that knows
only an allowlist of names (NOTE [Reading torch checkpoints] in retrograd._torch_checkpoint).
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
import os
import pickle
import struct
import zipfile
import zlib
from collections import Counter, OrderedDict
from typing import Any, BinaryIO

import numpy as np

from retrograd import _dtype as D
from retrograd import _safe_globals as G
from retrograd import _torch_checkpoint as torch_checkpoint
from retrograd._autograd.hooks import warn_if_has_hooks
from retrograd._checkpoint_io import (
    CorruptFile,
    Window,
    archive_end,
    check_entries,
    expect,
    group_storages,
    read_exact,
    view_of,
)
from retrograd._device import device as Device
from retrograd._safe_globals import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from retrograd._tensor import Size, Tensor, _is_wrapper, _rebuild_subclass, _wrap
from retrograd.storage import UntypedStorage

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

_MAGIC = "retrograd-checkpoint"
_VERSION = 2
_MANIFEST = "retrograd/manifest.json"
_DATA = "retrograd/data/{}.npy"
# nesting limit of saved objects (torch's pickler stops near 500); save refuses deeper objects
# and load deeper manifests, so whatever saves also loads
_MAX_DEPTH = 1000
_MAX_NPY_HEADER = 1 << 16
_MAX_MANIFEST = 1 << 30
# dtypes NumPy's .npy format cannot describe: stored as raw unsigned integers of their width
_RAW_VIEW = {"bfloat16": np.uint16, "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8}
_MAPPINGS = {dict: "dict", OrderedDict: "odict", Counter: "counter"}
_MAPPING_TYPES = {v: k for k, v in _MAPPINGS.items()}
_SEQUENCES = (list, tuple, set, frozenset)
_TOO_DEEP = "retrograd.save: object nested too deeply (or self-referencing)"
_BUSY = -1  # memo mark of a container whose children are being encoded


class _Encoder:
    """Turns an object into the manifest's node list, collecting the arrays to write."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.arrays: list[np.ndarray] = []  # NumPy arrays and scalars saved as such
        self._memo: dict[int, tuple[int, Any]] = {}  # id(obj) -> (node, obj kept alive)
        self._tensors: list[tuple[dict, np.ndarray]] = []

    def _add(self, node: Any) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def encode(self, obj: Any) -> int:
        """The node index of obj, children first (an explicit stack: no recursion)."""
        memo, results = self._memo, []
        stack: list[tuple[Any, int, list | None]] = [(obj, 0, None)]
        while stack:
            o, depth, kids = stack.pop()
            if kids is not None:  # children done: their indices are on top of results
                refs = results[len(results) - len(kids):]
                del results[len(results) - len(kids):]
                i = self._add(self._container(o, refs))
                memo[id(o)] = (i, o)
                results.append(i)
                continue
            if depth > _MAX_DEPTH:
                raise ValueError(_TOO_DEEP)
            hit = memo.get(id(o))
            if hit is not None:
                if hit[0] == _BUSY:
                    raise ValueError(_TOO_DEEP)
                results.append(hit[0])
                continue
            kids = _children(o)
            if kids is None:
                i = self._add(self._leaf(o))
                if isinstance(o, (Tensor, np.ndarray, np.generic)):
                    memo[id(o)] = (i, o)
                results.append(i)
                continue
            memo[id(o)] = (_BUSY, o)
            stack.append((o, depth, kids))
            stack.extend((k, depth + 1, None) for k in reversed(kids))
        return results[0]

    def _leaf(self, obj: Any) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, Tensor):
            kind = None if type(obj) is Tensor else _lazy_kind(obj)
            if kind is not None:  # no memory yet: its kind, dtype and requires_grad
                return {"$": "uninitialized", "dtype": obj.dtype.name, "kind": kind,
                        "requires_grad": bool(obj._requires_grad)}
            return self._tensor(obj)
        if isinstance(obj, (np.ndarray, np.generic)):
            return self._numpy(obj)
        if isinstance(obj, D.dtype):
            return {"$": "dtype", "v": obj.name}
        if isinstance(obj, Device):
            return {"$": "device", "v": str(obj)}
        if type(obj) is Size:
            return {"$": "size", "v": [int(s) for s in obj]}
        if isinstance(obj, int):  # int subclasses (IntEnum, ...) save as int
            return int(obj)
        if isinstance(obj, float):
            obj = float(obj)
            return obj if math.isfinite(obj) else {"$": "float", "v": repr(obj)}
        t = type(obj)
        if t is complex:
            return {"$": "complex", "v": [repr(obj.real), repr(obj.imag)]}
        if t in (bytes, bytearray):
            return {"$": "bytes", "v": base64.b64encode(bytes(obj)).decode("ascii")}
        name = G.name_if_allowed(obj)  # an allowed class or function, saved by name
        if name is not None:
            return {"$": "global", "name": name}
        raise TypeError(f"retrograd.save: cannot save an object of type {t.__module__}."
                        f"{t.__qualname__}; supported: tensors, NumPy arrays, numbers, str, "
                        "bytes, None, dtypes, devices, dicts/lists/tuples/sets of them, and "
                        "instances of classes allowed with "
                        "retrograd.serialization.add_safe_globals")

    def _container(self, obj: Any, refs: list[int]) -> dict:
        t = type(obj)
        if isinstance(obj, Tensor):  # an instance of a Tensor subclass, with its state
            node = self._tensor(obj)
            node["cls"] = _subclass_name(obj)
            node["state"] = refs[0]
            return node
        if t not in _MAPPINGS and t not in _SEQUENCES:  # an instance of an allowed class
            return {"$": "object", "cls": G.name_if_allowed(t), "state": refs[0]}
        if t in _MAPPINGS:
            n = 2 * len(obj)
            out = {"$": _MAPPINGS[t], "v": [refs[i:i + 2] for i in range(0, n, 2)]}
            if len(refs) > n:  # Module.state_dict's version info
                out["meta"] = refs[n]
            return out
        return {"$": t.__name__, "v": refs}

    def _tensor(self, t: Tensor) -> dict:
        if not _is_parameter(t):  # (torch's Parameter pickles without the warning)
            warn_if_has_hooks(t)
        arr = t._data
        out = {"$": "tensor", "dtype": t.dtype.name, "shape": list(arr.shape),
               "strides": list(arr.strides), "requires_grad": bool(t._requires_grad)}
        if type(t) is not Tensor and _is_parameter(t):
            out["parameter"] = True
        self._tensors.append((out, arr))
        return out

    def _numpy(self, a: np.ndarray | np.generic) -> dict:
        arr = np.asarray(a)
        if arr.dtype.hasobject:
            raise TypeError("retrograd.save: cannot save a NumPy array of Python objects")
        kind = "ndarray" if isinstance(a, np.ndarray) else "npscalar"
        self.arrays.append(arr)
        return {"$": kind, "i": len(self.arrays) - 1, "dtype": arr.dtype.str,
                "shape": list(arr.shape)}

    def entries(self) -> list[np.ndarray]:
        """The arrays to write: NumPy arrays, then one byte buffer per storage (tensor nodes
        get their storage index and offset here)."""
        buffers, places = group_storages([arr for _, arr in self._tensors])
        first = len(self.arrays)
        for (node, _), (s, offset) in zip(self._tensors, places):
            node["st"], node["off"] = first + s, offset
        return self.arrays + buffers


def _children(obj: Any) -> list | None:
    """The objects a container holds, in encoding order; None for anything else."""
    t = type(obj)
    if t in _MAPPINGS:
        kids = [x for kv in obj.items() for x in kv]
        metadata = getattr(obj, "_metadata", None)
        if metadata is not None and t is OrderedDict:
            kids.append(metadata)
        return kids
    if t in _SEQUENCES:
        return list(obj)
    if t is not Tensor and isinstance(obj, Tensor) and _subclass_name(obj) is not None:
        return [G.object_state(obj)]  # saved as the tensor, its class's name and its state
    if isinstance(obj, _LEAVES) or G.name_if_allowed(obj) is not None \
            or G.name_if_allowed(t) is None:
        return None
    # an instance of a class on the safe-globals allowlist: saved as its name and its state
    from enum import Enum

    return [obj.value if isinstance(obj, Enum) else G.object_state(obj)]


_LEAVES = (Tensor, np.ndarray, np.generic, str, bytes, bytearray, int, float, complex,
           type(None), D.dtype, Device)


def _lazy_kind(t: Tensor) -> str | None:
    """"parameter" or "buffer" for an uninitialized tensor, else None."""
    from retrograd.nn.parameter import UninitializedParameter, is_lazy

    if not is_lazy(t):
        return None
    return "parameter" if isinstance(t, UninitializedParameter) else "buffer"


def _subclass_name(t: Tensor) -> str | None:
    """The name a Tensor subclass instance is saved under (loading it needs its class on the
    safe-globals allowlist, as torch.load's weights_only does), or None for Tensor itself,
    parameters, lazy tensors and wrapper subclasses (saved as they were before)."""
    cls = type(t)
    if cls is Tensor or _is_parameter(t) or _lazy_kind(t) is not None or _is_wrapper(t):
        return None
    return G.name_if_allowed(cls) or G.qualified_name(cls)


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
    NumPy arrays) to a path or a writable binary file object, in retrograd's safe format.
    Tensors that share memory are saved once and load sharing it again."""
    enc = _Encoder()
    root = enc.encode(obj)
    arrays = enc.entries()
    manifest = json.dumps({"magic": _MAGIC, "version": _VERSION, "nodes": enc.nodes,
                           "root": root}, allow_nan=False, ensure_ascii=True)
    stream, owned = _open_for_write(f)
    try:
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED,
                             allowZip64=True) as zf:
            zf.writestr(_MANIFEST, manifest)
            for i, arr in enumerate(arrays):
                with zf.open(_DATA.format(i), "w", force_zip64=True) as out:
                    np.lib.format.write_array(out, _storage_array(arr), allow_pickle=False)
    finally:
        if owned:
            stream.close()


# --- loading ----------------------------------------------------------------------------------

class _Decoder:
    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        self.names = set(zf.namelist())
        self.loaded: dict[Any, Any] = {}

    # version 2: a flat node list, children before parents
    def decode_nodes(self, nodes: Any, root: Any) -> Any:
        expect(isinstance(nodes, list) and type(root) is int and 0 <= root < len(nodes),
               "bad node list")
        values: list[Any] = [None] * len(nodes)
        depths = [0] * len(nodes)
        for i, node in enumerate(nodes):
            if node is None or isinstance(node, (bool, int, float, str)):
                values[i] = node
                continue
            deepest = [-1]

            def child(ref: Any, i: int = i, deepest: list = deepest) -> Any:
                expect(type(ref) is int and 0 <= ref < i, "bad node reference")
                deepest[0] = max(deepest[0], depths[ref])
                return values[ref]

            values[i] = self.node(node, child)
            depths[i] = deepest[0] + 1
            expect(depths[i] <= _MAX_DEPTH, "manifest nested too deeply")
        return values[root]

    # version 1: nested JSON
    def decode_nested(self, node: Any, depth: int = 0) -> Any:
        expect(depth <= _MAX_DEPTH, "manifest nested too deeply")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        return self.node(node, lambda x: self.decode_nested(x, depth + 1))

    def node(self, node: Any, child: Any) -> Any:
        if isinstance(node, list):  # bare JSON arrays are never written
            raise CorruptFile("unexpected JSON array in manifest")
        expect(isinstance(node, dict) and isinstance(node.get("$"), str), "bad manifest node")
        handler = _TAGS.get(node["$"])
        expect(handler is not None, f"unknown manifest tag {node['$']!r}")
        return handler(self, node, child)

    def mapping(self, node: dict, child: Any) -> Any:
        pairs = node.get("v")
        expect(isinstance(pairs, list), "mapping without items")
        out = _MAPPING_TYPES[node["$"]]()
        for pair in pairs:
            expect(isinstance(pair, list) and len(pair) == 2, "bad mapping item")
            key = child(pair[0])
            try:
                out[key] = child(pair[1])
            except TypeError as e:  # an unhashable key
                raise CorruptFile(f"bad mapping key: {e}") from None
        if "meta" in node:
            expect(node["$"] == "odict", "metadata on a mapping that cannot hold it")
            out._metadata = child(node["meta"])
        return out

    def sequence(self, node: dict, child: Any) -> Any:
        v = node.get("v")
        expect(isinstance(v, list), "container without a value list")
        values = [child(x) for x in v]
        kind = node["$"]
        if kind == "list":
            return values
        try:
            return {"tuple": tuple, "set": set, "frozenset": frozenset}[kind](values)
        except TypeError as e:  # unhashable set members
            raise CorruptFile(f"bad {kind}: {e}") from None

    def entry(self, i: Any) -> tuple[tuple, bool, np.dtype, np.ndarray]:
        """Data entry i: (shape, fortran order, dtype, flat uint8 buffer of its bytes)."""
        expect(type(i) is int and i >= 0, "bad array index")
        if i in self.loaded:
            return self.loaded[i]
        name = _DATA.format(i)
        expect(name in self.names, f"missing array {name}")
        info = self.zf.getinfo(name)
        with self.zf.open(info) as fh:
            version = np.lib.format.read_magic(fh)
            expect(version in ((1, 0), (2, 0), (3, 0)), "bad .npy version")
            hdr = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                   else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = hdr(fh, max_header_size=_MAX_NPY_HEADER)
            expect(not dtype.hasobject, "object array in checkpoint")
            nbytes = math.prod(shape) * dtype.itemsize
            expect(info.file_size - fh.tell() == nbytes, "array data has the wrong size")
            buf = read_exact(fh, nbytes)
        self.loaded[i] = out = (shape, fortran, dtype, buf)
        return out

    def array(self, node: dict) -> np.ndarray:
        """A typed array entry (NumPy nodes, and tensors of version 1 files)."""
        shape, fortran, dtype, buf = self.entry(node.get("i"))
        want = node.get("shape")
        expect(isinstance(want, list) and list(shape) == want, "array shape differs from "
               "the manifest")
        return buf.view(dtype).reshape(shape, order="F" if fortran else "C")

    def storage(self, i: Any) -> np.ndarray:
        shape, _, dtype, buf = self.entry(i)
        expect(dtype == np.uint8 and len(shape) == 1, "storage is not a byte array")
        return buf

    def tensor(self, node: dict, child: Any) -> Tensor:
        name = node.get("dtype")
        d = D._NAMED.get(name) if isinstance(name, str) else None
        expect(d is not None, f"unknown dtype {name!r}")
        if "st" in node:
            arr = view_of(self.storage(node["st"]), np.dtype(d.np), node.get("off"),
                          node.get("shape"), node.get("strides"))
            if any(s == 0 and n > 1 for s, n in zip(arr.strides, arr.shape)):
                arr.flags.writeable = False  # elements share memory: in-place writes refused
        else:  # version 1: its own typed array
            key = ("tensor", node.get("i"))
            if key in self.loaded:
                return self.loaded[key]
            arr = self.array(node)
            raw = _RAW_VIEW.get(d.name)
            if raw is not None:
                expect(arr.dtype == np.dtype(raw), "raw array of the wrong width")
                arr = arr.view(d.np)
        expect(arr.dtype == d.np, "array dtype differs from the manifest")
        t = _wrap(arr)
        requires_grad = node.get("requires_grad", False)
        expect(isinstance(requires_grad, bool), "bad requires_grad")
        expect(not requires_grad or d.is_floating_point, "requires_grad on a non-float tensor")
        if node.get("parameter") is True:
            from retrograd.nn.parameter import Parameter

            t = Parameter(t, requires_grad=requires_grad)
        else:
            t._requires_grad = requires_grad
            if "cls" in node:
                t = self._subclass_instance(node, t, child)
        if "st" in node:
            # the tensor lives in its saved storage, as in torch: storage_offset() counts from
            # the storage's start and tensors of one storage share untyped_storage()
            t._get_meta().storage = self.untyped_storage(node["st"])
        else:
            self.loaded[("tensor", node.get("i"))] = t
        return t

    def _subclass_instance(self, node: dict, t: Tensor, child: Any) -> Tensor:
        """t as an instance of the saved Tensor subclass (allowed by name), with its state."""
        cls = self._lookup(node.get("cls"))
        expect(isinstance(cls, type) and issubclass(cls, Tensor), "tensor of a class that is "
               "not a Tensor subclass")
        state = child(node["state"]) if "state" in node else None
        return _rebuild_subclass(cls, t._data, t._requires_grad, state)

    def untyped_storage(self, i: Any) -> UntypedStorage:
        key = ("untyped", i)
        if key not in self.loaded:
            self.loaded[key] = UntypedStorage._over(self.storage(i))
        return self.loaded[key]

    def numpy(self, node: dict, child: Any) -> Any:
        arr = self.array(node)
        expect(node.get("dtype") == arr.dtype.str, "array dtype differs from the manifest")
        if node["$"] == "npscalar":
            expect(arr.shape == (), "NumPy scalar with a shape")
            return arr[()]
        return arr

    def float_special(self, node: dict, child: Any) -> float:
        v = node.get("v")
        expect(v in ("nan", "inf", "-inf"), "bad float")
        return float(v)

    def complex_(self, node: dict, child: Any) -> complex:
        v = node.get("v")
        if isinstance(v, list):  # version 2: the two parts as repr strings
            expect(len(v) == 2 and all(isinstance(x, str) and len(x) < 64 for x in v),
                   "bad complex")
            return complex(float(v[0]), float(v[1]))
        re, im = child(node.get("re")), child(node.get("im"))
        expect(isinstance(re, float) and isinstance(im, float), "bad complex")
        return complex(re, im)

    def bytes_(self, node: dict, child: Any) -> bytes:
        v = node.get("v")
        expect(isinstance(v, str), "bad bytes")
        return base64.b64decode(v.encode("ascii"), validate=True)

    def dtype(self, node: dict, child: Any) -> D.dtype:
        d = D._NAMED.get(node.get("v")) if isinstance(node.get("v"), str) else None
        expect(d is not None, "unknown dtype")
        return d

    def device(self, node: dict, child: Any) -> Device:
        expect(isinstance(node.get("v"), str), "bad device")
        return Device(node["v"])

    def _lookup(self, name: Any) -> Any:
        expect(isinstance(name, str), "bad global name")
        obj = G.allowed_by_name().get(name)
        if obj is None:
            raise _NotAllowed(G.not_allowed_message(name))
        return obj

    def global_(self, node: dict, child: Any) -> Any:
        return self._lookup(node.get("name"))

    def object_(self, node: dict, child: Any) -> Any:
        cls = self._lookup(node.get("cls"))
        expect(isinstance(cls, type), "object of a name that is not a class")
        return G.rebuild(cls, child(node.get("state")))

    def size(self, node: dict, child: Any) -> Size:
        v = node.get("v")
        expect(isinstance(v, list) and all(type(s) is int for s in v), "bad size")
        return Size(v)


def _uninitialized(self: _Decoder, node: dict, child: Any) -> Tensor:
    """An UninitializedParameter or UninitializedBuffer (a lazy module's state_dict)."""
    from retrograd.nn.parameter import UninitializedBuffer, UninitializedParameter

    name = node.get("dtype")
    d = D._NAMED.get(name) if isinstance(name, str) else None
    expect(d is not None, f"unknown dtype {name!r}")
    requires_grad = node.get("requires_grad")
    expect(isinstance(requires_grad, bool), "bad requires_grad")
    expect(not requires_grad or d.is_floating_point, "requires_grad on a non-float tensor")
    kind = node.get("kind")
    expect(kind in ("parameter", "buffer"), "bad kind of uninitialized tensor")
    cls = UninitializedParameter if kind == "parameter" else UninitializedBuffer
    return cls(requires_grad, None, d)


_TAGS = {
    "uninitialized": _uninitialized,
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


def _check_format(zf: zipfile.ZipFile, size: int) -> None:
    names = zf.namelist()
    if _MANIFEST not in names:
        raise CorruptFile("no retrograd manifest in the archive")
    check_entries(zf, size)


def _parse_manifest(zf: zipfile.ZipFile) -> dict:
    info = zf.getinfo(_MANIFEST)
    expect(info.file_size <= _MAX_MANIFEST, "manifest too large")
    with zf.open(info) as fh:
        raw = fh.read(info.file_size)
    doc = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    expect(isinstance(doc, dict) and doc.get("magic") == _MAGIC, "not a retrograd manifest")
    expect(doc.get("version") in (1, _VERSION),
           f"unsupported checkpoint version {doc.get('version')!r}")
    expect("root" in doc, "manifest without a root object")
    return doc


def _reject_constant(name: str) -> Any:
    raise CorruptFile(f"invalid JSON constant {name}")


def _decode(source: BinaryIO, size: int) -> Any:
    with zipfile.ZipFile(source, "r") as zf:
        if _MANIFEST not in zf.namelist() and torch_checkpoint.is_torch_archive(zf):
            check_entries(zf, size)
            try:
                return torch_checkpoint.decode(zf)
            except torch_checkpoint.NotAllowed as e:
                raise _NotAllowed(str(e)) from None
            except pickle.UnpicklingError as e:
                raise CorruptFile(f"{e}") from None
        _check_format(zf, size)
        doc = _parse_manifest(zf)
        dec = _Decoder(zf)
        if doc["version"] == 1:
            return dec.decode_nested(doc["root"])
        return dec.decode_nodes(doc.get("nodes"), doc["root"])


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args: Any
         ) -> Any:
    """Loads an object saved by retrograd.save from a path or readable binary file object.

    map_location is accepted and ignored (everything lives on the CPU); weights_only is
    always in effect: only tensors, arrays, numbers, strings and containers are decoded.
    A file object is read from its position, and left just after the checkpoint (several
    checkpoints saved one after another load one by one).
    """
    if isinstance(f, (str, os.PathLike)):
        name = repr(os.fspath(f))
        stream, owned = open(f, "rb"), True  # OS errors (no such file, a directory) as such
    else:
        if not hasattr(f, "read"):
            raise AttributeError(f"'{type(f).__name__}' object has no attribute 'read'")
        name, owned = "the given file object", False
        stream = f if hasattr(f, "seek") and f.seekable() else io.BytesIO(f.read())
    try:
        start = stream.tell()
        end = archive_end(stream, start)
        out = _decode(Window(stream, start, end), end - start)
        stream.seek(end)
        return out
    except _NotAllowed as e:
        raise RuntimeError(f"retrograd.load: {name} holds an object retrograd does not load by "
                           f"default. {e}") from None
    except (CorruptFile, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError,
            KeyError, TypeError, UnicodeDecodeError, RecursionError, OverflowError,
            MemoryError, struct.error, zlib.error, binascii.Error, NotImplementedError) as e:
        raise RuntimeError(f"retrograd.load: {name} is not a valid retrograd checkpoint "
                           f"({type(e).__name__}: {e})") from e
    finally:
        if owned:
            stream.close()
