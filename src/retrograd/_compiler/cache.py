"""The cache of generated code, in memory and on disk (NOTE [Compiler pipeline], stage 5).

The key hashes the forward and backward graphs' text (which holds every op, shape, dtype and
constant), the hook graphs' structure and retrograd's version. Two calls that capture the same
graphs share the generated source, even from different functions or hook pairs. A hook graph
that calls a wrapped (non-op) function is keyed by that call's meta["user_cache_hash"]; without
one the cache is bypassed (its behaviour cannot be read from the graph).

On disk each entry is one JSON file under $RETROGRAD_CACHE_DIR (default
~/.cache/retrograd/compiler), named by the key and a digest of retrograd's source files (read
once per process, ~10 ms, when the disk is first used: code changed without a new version
number does not read what the old code wrote). It holds the sources, their bytecode (marshal,
used only by the Python that wrote it) and a hash of them: a file that does not parse, belongs
to another version or fails its hash is ignored with a warning and rebuilt; a directory that
cannot be written is logged and skipped.

NOTE [Pre-capture index]
Capture costs as much as the rest of a compile, and the graph key needs the captured graph, so
a cache keyed by graphs alone still pays for capture on a hit. The index in front of it maps
what a call *is* before anything runs to the compiled variant that call produced:
  * the function's identity (identity.py): the digest of its code object (bytecode, constants,
    names, nested code) and a description of every value the code reads from outside it:
    closure cells, defaults, and each global name with the attribute chain loaded from it
    (`F.linear`, `np.float32`), a user function recursively by its own identity, a module by
    name, a library function or class by module and qualified name;
  * the call's guards (argument shapes, dtypes, requires_grad, structure and Python values,
    grad and inference mode, the default dtype), the saved-tensor hooks' structure key, the
    config that shapes the code, retrograd's version and the Python bytecode tag (and, for
    the files on disk, the digest of retrograd's source).
Why a match may skip capture: capture runs the function's Python on the call's tensors; what
it records depends only on the code, the values it reads and the guarded properties of its
arguments (never on tensor values: reading one into Python ends capture, and config.verify
rejects values computed outside ops). Equal keys mean the same code reading equal values with
equally shaped arguments, so capture would record the same graph again; this is the reasoning
that already lets a compiled function reuse a variant for a call with the same guards, widened
from one function object to every function with the same identity. Whenever a part cannot be
written as a process-independent value, the key is None and the call captures as without an
index: a bound method or module (attributes read through `self`), an object, a tensor or a user
class among the values read, an empty closure cell, an argument guarded by identity, a hook
graph with a wrapped call lacking user_cache_hash or holding tensor constants, a variant that
reads tensors from outside (they are inputs of the compiled code, held by the variant). Only
variants that compiled are recorded: a function that failed capture (data-dependent control
flow) or verification has no entry, so it is captured again and runs eagerly again.
In memory the index holds the variant itself; on disk (index/<key>.json next to the graph
records) it holds the graph key, the variant's calling metadata and its namespace written as
names (ops, helpers) and constants (arrays, dtypes, numbers), and the graph record holds the
sources and their compiled bytecode for this Python, so a new process loads a variant without
capturing or compiling. A variant whose namespace holds anything else (a random generator, a
hook's wrapped function) is indexed in memory only. Unusable files are ignored with a warning,
like graph records, and the call captures.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import marshal
import os
import sys
from typing import Any

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._compiler import config
from retrograd._compiler.codegen import FORMAT, Generated, generate, namespace_for

log = logging.getLogger("retrograd.compiler")
MEMORY: dict = {}  # graph key -> (forward source, backward source or None)
INDEX: dict = {}   # index key -> the compiled variant (NOTE [Pre-capture index])
BYPASS = "bypass"


def cache_dir() -> str:
    root = os.environ.get("RETROGRAD_CACHE_DIR")
    if root:
        return root
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "retrograd", "compiler")


def _index_dir() -> str:
    return os.path.join(cache_dir(), "index")


def _version() -> str:
    import retrograd

    return retrograd.__version__


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def key_for(part, hook_key) -> str | None:
    if hook_key == BYPASS:
        return None
    from retrograd._compiler.graph import key_text

    text = key_text(part.forward)
    if part.backward is not None:
        text += key_text(part.backward)
    text += repr((hook_key, config.reuse_buffers, _version(), FORMAT))
    return _digest(text)


def _content_hash(payload: dict) -> str:
    h = hashlib.sha256()
    _feed(h, payload)
    return h.hexdigest()


def _feed(h: Any, value: Any) -> None:
    """Hash `value` canonically: strings (the sources, the bytecode) as their bytes, each
    length-prefixed, and dict keys in order; other values as sorted JSON (cheaper than
    writing the whole payload as JSON again)."""
    if isinstance(value, str):
        data = value.encode()
        h.update(b"s%d:" % len(data))
        h.update(data)
    elif isinstance(value, dict):
        h.update(b"d%d:" % len(value))
        for k in sorted(value):
            _feed(h, str(k))
            _feed(h, value[k])
    else:
        data = json.dumps(value, sort_keys=True).encode()
        h.update(b"j%d:" % len(data))
        h.update(data)


_SOURCE: list = []  # the digest of retrograd's own source, once per process


def _source_digest() -> str:
    """A digest of every .py file of retrograd: a file on disk was written by the same code
    (capture, formulas, partition, codegen), not only by the same version number."""
    if not _SOURCE:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        h = hashlib.sha256()
        try:
            for directory, dirs, files in os.walk(root):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(".py"):
                        path = os.path.join(directory, name)
                        h.update(os.path.relpath(path, root).encode())
                        with open(path, "rb") as f:
                            h.update(f.read())
        except OSError as e:  # unreadable source: a digest no other process shares
            h.update(f"{os.getpid()} {e}".encode())
        _SOURCE.append(h.hexdigest()[:16])
    return _SOURCE[0]


def _path(directory: str, key: str) -> str:
    return os.path.join(directory, _digest(key + _source_digest()) + ".json")


def _load(key: str, directory: str | None = None) -> dict | None:
    path = _path(directory or cache_dir(), key)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
        payload = record["payload"]
        if record.get("version") != _version() or record.get("key") != key or \
                record.get("hash") != _content_hash(payload):
            raise ValueError("version, key or content hash does not match")
        return payload
    except (OSError, ValueError, KeyError, TypeError) as e:
        _ws.warn(f"retrograd.compile: ignoring the unusable cache file {path} ({e}); "
                 "rebuilding it", stacklevel=2)
        return None


def _store(key: str, payload: dict, directory: str | None = None) -> None:
    directory = directory or cache_dir()
    record = {"version": _version(), "key": key, "hash": _content_hash(payload),
              "payload": payload}
    try:
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, f".{key}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(tmp, _path(directory, key))
    except OSError as e:
        log.info("compiled code not written to the cache directory %s: %s", directory, e)


def _bytecode(fn) -> str:
    return base64.b64encode(marshal.dumps(fn.__code__)).decode()


def generate_pair(part, label: str, hook_key) -> tuple:
    """Generated forward and backward for a partitioned graph, through the cache, and the
    graph key (None: bypassed)."""
    from retrograd._compiler.api import counters

    key = key_for(part, hook_key)
    sources = None
    if key is None:
        counters["cache_bypass"] += 1
    else:
        sources = MEMORY.get(key)
        if sources is None and config.disk_cache:
            payload = _load(key)
            if payload is not None:
                sources = (payload["forward"], payload["backward"])
        if sources is None:
            counters["cache_miss"] += 1
        else:
            counters["cache_hit"] += 1
    reuse = config.reuse_buffers
    if sources is None:
        fw = generate(part.forward, "forward", f"compiled {label} forward", reuse)
        bw = None if part.backward is None else generate(
            part.backward, "backward", f"compiled {label} backward", reuse, take_list=True)
        if key is not None:
            MEMORY[key] = (fw.source, None if bw is None else bw.source)
            if config.disk_cache:
                _store(key, {"forward": fw.source,
                             "backward": None if bw is None else bw.source,
                             "bytecode": {"tag": sys.implementation.cache_tag,
                                          "forward": _bytecode(fw.fn),
                                          "backward": None if bw is None else _bytecode(bw.fn)}})
        return fw, bw, key
    fw = _from_source(part.forward, "forward", sources[0], f"compiled {label} forward", reuse)
    bw = None if part.backward is None else _from_source(
        part.backward, "backward", sources[1], f"compiled {label} backward", reuse)
    return fw, bw, key


def _from_source(graph, name: str, source: str, label: str, reuse: bool) -> Generated:
    """Compile cached source with the namespace (kernels, constants) of this capture."""
    from retrograd._ops.codegen import compile_function

    ns = namespace_for(graph, reuse)
    fn = compile_function(name, source.rstrip("\n").split("\n"), ns, label, name)
    return Generated(fn, source, _constants(ns))


def _constants(ns: dict) -> dict:
    return {k: v for k, v in ns.items() if k.startswith("_c") and k[2:].isdigit()}


# --- the pre-capture index (NOTE [Pre-capture index]) -------------------------------------------

def index_key(fn: Any, guards: tuple, hooks: Any) -> str | None:
    """The index key of a call of plain function `fn` with guard key `guards` and inlineable
    hook pair `hooks` (or None); None when any part cannot be keyed."""
    from retrograd._compiler.identity import describe, function_key

    fk = function_key(fn)
    if fk is None:
        return None
    grad, params, leaves, spec, hooks_guard, inference, training, default_dtype = guards
    if params or training:
        return None
    for g in leaves:
        if g[0] == "id":  # an argument guarded by identity means nothing elsewhere
            return None
    call = describe((grad, leaves, spec, inference, default_dtype))
    if call is None:
        return None
    hk: Any = None
    if hooks_guard is not None:
        if hooks is None:
            return None
        hk = _hooks_index_key(hooks)
        if hk is None:
            return None
        hk = (hk, hooks_guard[3], hooks_guard[4])
    return _digest(repr((fk, call, hk, config.verify, config.reuse_buffers, _version(),
                         FORMAT, sys.implementation.cache_tag)))


def _hooks_index_key(pair: tuple) -> Any:
    from retrograd._compiler.hooks import structure_key

    for gm in pair:
        for n in gm.graph.nodes:
            if n.op == "get_attr":  # a tensor constant: its repr in the key may be shortened
                return None
    key = structure_key(pair)
    return None if key == BYPASS else key


def lookup(ikey: str, label: str) -> Any:
    """The variant recorded under `ikey`, from memory or disk, or None."""
    entry = INDEX.get(ikey)
    if entry is None and config.disk_cache:
        entry = _load_indexed(ikey, label)
        if entry is not None:
            INDEX[ikey] = entry
    return entry


def record(ikey: str, entry: Any, graph_key: str | None) -> None:
    """Index a variant that compiled and passed its checks."""
    if entry.free:  # tensors read from outside are the variant's own inputs
        return
    INDEX[ikey] = entry
    if not config.disk_cache or graph_key is None:
        return
    payload = _index_payload(entry, graph_key)
    if payload is not None:
        _store(ikey, payload, _index_dir())


# entry fields that describe how to call the generated code (runtime.Entry)
_FIELDS = ("n_outputs", "mutated", "saved_primal", "diff_outputs", "diff_primals", "n_primals",
           "inline_hooks", "saved_names", "backward_free", "sym_sources")


class _Unwritable(Exception):
    pass


def _index_payload(entry: Any, graph_key: str) -> dict | None:
    try:
        meta = {f: getattr(entry, f) for f in _FIELDS}
        meta["out_spec"] = _spec_out(entry.out_spec)
        meta["out_leaves"] = [[k, _value_out(v)] for k, v in entry.out_leaves]
        ns = {"forward": _namespace_out(entry.forward.fn.__globals__, "forward"),
              "backward": None if entry.backward is None else
              _namespace_out(entry.backward.fn.__globals__, "backward")}
    except _Unwritable:
        return None
    return {"graph": graph_key, "meta": meta, "namespace": ns}


def _load_indexed(ikey: str, label: str) -> Any:
    payload = _load(ikey, _index_dir())
    if payload is None:
        return None
    graph = _load(payload.get("graph", ""), cache_dir()) if payload.get("graph") else None
    if graph is None:
        return None
    from retrograd._compiler.runtime import Entry

    try:
        entry = Entry()
        meta = payload["meta"]
        for f in _FIELDS:
            setattr(entry, f, meta[f])
        entry.out_spec = _spec_in(meta["out_spec"])
        entry.out_leaves = [(k, _value_in(v)) for k, v in meta["out_leaves"]]
        code = graph.get("bytecode") or {}
        same_python = code.get("tag") == sys.implementation.cache_tag
        for name in ("forward", "backward"):
            source = graph[name]
            if source is None:
                continue
            ns = _namespace_in(payload["namespace"][name])
            gen_label = f"compiled {label} {name}"
            if same_python and code.get(name):
                from retrograd._generated import load_function

                fn = load_function(name, marshal.loads(base64.b64decode(code[name])), source,
                                   ns, gen_label, name)
            else:
                from retrograd._ops.codegen import compile_function

                fn = compile_function(name, source.rstrip("\n").split("\n"), ns, gen_label,
                                      name)
            setattr(entry, name, Generated(fn, source, _constants(ns)))
        if entry.forward is None:
            raise ValueError("no forward")
        return entry
    except (KeyError, ValueError, TypeError, EOFError, _Unwritable) as e:
        _ws.warn(f"retrograd.compile: ignoring the unusable cache index entry {ikey} "
                 f"({e!r}); capturing again", stacklevel=2)
        return None


# --- writing a namespace and constants as JSON --------------------------------------------------

# the NumPy functions generated code calls by short names (codegen._NP_NAMES)
_NP_NAMES: dict = {}


def _np_names() -> None:
    from retrograd._compiler.codegen import _NP_NAMES as names

    _NP_NAMES.update(names)


_KERNELS: dict = {}  # id(kernel) -> ("op", name) or ("helper", code name)


def _kernel_names() -> dict:
    if not _KERNELS:
        from retrograd._compiler.factory_ops import HELPERS as FACTORY_HELPERS
        from retrograd._compiler.helpers import HELPERS
        from retrograd._ops.registry import OPS

        for name, op in OPS.items():
            _KERNELS.setdefault(id(op.forward), ["op", name])
        for h in HELPERS + FACTORY_HELPERS:
            _KERNELS[id(h.kernel)] = ["helper", h.code_name]
    return _KERNELS


def _namespace_out(ns: dict, own: str) -> dict:
    if not _NP_NAMES:
        _np_names()
    out = {}
    for name, value in ns.items():
        if name in ("__builtins__", own):
            continue
        if value is np:
            out[name] = ["np"]
        elif value is np.asarray:
            out[name] = ["asarray"]
        elif _NP_NAMES.get(name) is value:
            out[name] = ["np_name"]
        elif name.startswith("_c") and name[2:].isdigit():
            out[name] = ["const", _value_out(value)]
        else:
            kernel = _kernel_names().get(id(value))
            if kernel is None:
                raise _Unwritable(name)
            out[name] = kernel
    return out


def _namespace_in(desc: dict) -> dict:
    if not _NP_NAMES:
        _np_names()
    from retrograd._compiler.factory_ops import HELPERS as FACTORY_HELPERS
    from retrograd._compiler.helpers import HELPERS
    from retrograd._ops.registry import OPS

    helpers = {h.code_name: h.kernel for h in HELPERS + FACTORY_HELPERS}
    ns: dict = {}
    for name, d in desc.items():
        kind = d[0]
        if kind == "np":
            ns[name] = np
        elif kind == "asarray":
            ns[name] = np.asarray
        elif kind == "np_name":
            ns[name] = _NP_NAMES[name]
        elif kind == "const":
            ns[name] = _value_in(d[1])
        elif kind == "op":
            ns[name] = OPS[d[1]].forward
        elif kind == "helper":
            ns[name] = helpers[d[1]]
        else:
            raise ValueError(f"unknown namespace entry {d!r}")
    return ns


def _value_out(v: Any) -> Any:
    t = type(v)
    if v is None or t in (bool, int, str):
        return v
    if t is float:
        return {"float": v.hex()}
    if t is complex:
        return {"complex": [v.real.hex(), v.imag.hex()]}
    if t in (tuple, list):
        return {t.__name__: [_value_out(x) for x in v]}
    if isinstance(v, np.dtype) and _plain_dtype(v):
        return {"dtype": v.str}
    if isinstance(v, (np.ndarray, np.generic)) and _plain_dtype(v.dtype):
        arr = np.ascontiguousarray(v)
        return {"array" if t is np.ndarray else "scalar": [
            v.dtype.str, list(arr.shape), base64.b64encode(arr.tobytes()).decode()]}
    return _unwritable(v)


def _plain_dtype(dt: np.dtype) -> bool:
    """A dtype its .str names again (not an extension type such as bfloat16, not objects)."""
    return dt.kind in "biufc" and np.dtype(dt.str) == dt


def _unwritable(v: Any) -> Any:
    raise _Unwritable(type(v).__name__)


def _value_in(d: Any) -> Any:
    if not isinstance(d, dict):
        return d
    (kind, v), = d.items()
    if kind == "float":
        return float.fromhex(v)
    if kind == "complex":
        return complex(float.fromhex(v[0]), float.fromhex(v[1]))
    if kind == "tuple":
        return tuple(_value_in(x) for x in v)
    if kind == "list":
        return [_value_in(x) for x in v]
    if kind == "dtype":
        return np.dtype(v)
    if kind in ("array", "scalar"):
        dt = np.dtype(v[0])
        arr = np.frombuffer(base64.b64decode(v[2]), dtype=dt).reshape(v[1]).copy()
        return arr if kind == "array" else arr[()]
    raise ValueError(f"unknown constant {d!r}")


def _spec_out(spec: Any) -> Any:
    if spec is None:
        return None
    kind, items = spec
    if kind is dict:
        return ["dict", [[_value_out(k), _spec_out(x)] for k, x in items]]
    if kind not in (tuple, list):
        raise _Unwritable(getattr(kind, "__name__", "spec"))
    return [kind.__name__, [_spec_out(x) for x in items]]


def _spec_in(d: Any) -> Any:
    if d is None:
        return None
    kind, items = d
    if kind == "dict":
        return (dict, tuple((_value_in(k), _spec_in(x)) for k, x in items))
    return ({"tuple": tuple, "list": list}[kind], tuple(_spec_in(x) for x in items))

