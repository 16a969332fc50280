"""The cache of generated code, in memory and on disk (NOTE [Compiler pipeline], stage 5).

The key hashes the forward and backward graphs' text (which holds every op, shape, dtype and
constant), the hook graphs' structure and retrograd's version. Two calls that capture the same
graphs share the generated source, even from different functions or hook pairs. A hook graph
that calls a wrapped (non-op) function is keyed by that call's meta["user_cache_hash"]; without
one the cache is bypassed (its behaviour cannot be read from the graph).

On disk each entry is one JSON file `<key>.json` under $RETROGRAD_CACHE_DIR (default
~/.cache/retrograd/compiler) holding the sources and a hash of them: a file that does not parse,
belongs to another version or fails its hash is ignored with a warning and rebuilt; a directory
that cannot be written is logged and skipped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings

from retrograd._compiler import config
from retrograd._compiler.codegen import Generated, generate, namespace_for

log = logging.getLogger("retrograd.compiler")
MEMORY: dict = {}  # key -> (forward source, backward source or None)
BYPASS = "bypass"


def cache_dir() -> str:
    root = os.environ.get("RETROGRAD_CACHE_DIR")
    if root:
        return root
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "retrograd", "compiler")


def _version() -> str:
    import retrograd

    return retrograd.__version__


def key_for(part, hook_key) -> str | None:
    if hook_key == BYPASS:
        return None
    text = part.forward.python_code("forward")
    if part.backward is not None:
        text += part.backward.python_code("backward")
    from retrograd._compiler.codegen import FORMAT

    text += repr((hook_key, config.reuse_buffers, _version(), FORMAT))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _content_hash(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _load(key: str) -> dict | None:
    path = os.path.join(cache_dir(), key + ".json")
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
        warnings.warn(f"retrograd.compile: ignoring the unusable cache file {path} ({e}); "
                      "rebuilding it", stacklevel=2)
        return None


def _store(key: str, payload: dict) -> None:
    directory = cache_dir()
    record = {"version": _version(), "key": key, "hash": _content_hash(payload),
              "payload": payload}
    try:
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, f".{key}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(tmp, os.path.join(directory, key + ".json"))
    except OSError as e:
        log.info("compiled code not written to the cache directory %s: %s", directory, e)


def generate_pair(part, label: str, hook_key) -> tuple:
    """Generated forward and backward for a partitioned graph, through the cache."""
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
                             "backward": None if bw is None else bw.source})
        return fw, bw
    fw = _from_source(part.forward, "forward", sources[0], f"compiled {label} forward", reuse)
    bw = None if part.backward is None else _from_source(
        part.backward, "backward", sources[1], f"compiled {label} backward", reuse)
    return fw, bw


def _from_source(graph, name: str, source: str, label: str, reuse: bool) -> Generated:
    """Compile cached source with the namespace (kernels, constants) of this capture."""
    from retrograd._ops.codegen import compile_function

    ns = namespace_for(graph, reuse)
    fn = compile_function(name, source.rstrip("\n").split("\n"), ns, label, name)
    constants = {k: v for k, v in ns.items() if k.startswith("_c") and k[2:].isdigit()}
    return Generated(fn, source, constants)
