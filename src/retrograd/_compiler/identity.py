"""What a function is, as a key that outlives it: its code and the values its code reads from
outside (closure cells, globals, defaults), for the pre-capture index (NOTE [Pre-capture index]
in cache.py).

`describe(value)` writes a value as text that means the same thing in another process, or
returns None when it cannot (an object, a tensor, a user class, a bound method): the caller then
captures as if there were no index. Modules are named; functions and classes from retrograd,
NumPy and the standard library by module and qualified name (retrograd's version is in the key);
a user function by its own identity, recursively.
"""

from __future__ import annotations

import builtins
import dis
import hashlib
import marshal
import sys
import types
from typing import Any

import numpy as np

_LIBRARIES = ("retrograd", "numpy", "builtins", "math", "operator", "functools", "itertools",
              "collections", "typing")
_MAX_ITEMS = 64  # a container larger than this is not worth keying: capture instead
_MAX_DEPTH = 6
# builtins through which code reads names the bytecode does not show
_DYNAMIC = frozenset({"eval", "exec", "globals", "locals", "vars", "__import__", "compile"})

# id(code) -> (code, digest of the code, the global name chains it loads)
_CODE: dict = {}


def _chains(code: types.CodeType) -> tuple:
    """The dotted names the code loads from globals (`F.linear`, `np.float32`, `helper`), its
    nested functions' included."""
    found: list = []
    chain: list | None = None
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            if chain:
                found.append(tuple(chain))
            chain = [ins.argval]
        elif chain is not None and ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            chain.append(ins.argval)
        else:
            if chain:
                found.append(tuple(chain))
            chain = None
    if chain:
        found.append(tuple(chain))
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            found.extend(_analyse(c)[1])
    return tuple(dict.fromkeys(found))


def _analyse(code: types.CodeType) -> tuple:
    hit = _CODE.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1], hit[2]
    # marshal holds the bytecode, constants (nested code included), names and positions
    digest = hashlib.sha256(marshal.dumps(code)).hexdigest()
    chains = _chains(code)
    _CODE[id(code)] = (code, digest, chains)
    return digest, chains


def _library(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in _LIBRARIES


def _named(obj: Any) -> str | None:
    """module:qualname of a library function or class, if that name finds this very object."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        return None
    if isinstance(obj, np.ufunc):
        return f"ufunc:{obj.__name__}"
    return f"{module}:{qualname}"


def describe(value: Any, depth: int = 0, seen: tuple = ()) -> Any:
    """A process-independent text for `value`, or None (see the module docstring)."""
    if depth > _MAX_DEPTH:
        return None
    t = type(value)
    if value is None or t in (bool, int, str, bytes):
        return (t.__name__, value)
    if t in (float, complex):
        return (t.__name__, repr(value))
    if t in (tuple, list, frozenset, set):
        if len(value) > _MAX_ITEMS:
            return None
        items = sorted(value, key=repr) if t in (frozenset, set) else value
        parts = tuple(describe(v, depth + 1, seen) for v in items)
        return None if any(p is None for p in parts) else (t.__name__, parts)
    if t is dict:
        if len(value) > _MAX_ITEMS:
            return None
        parts = tuple((describe(k, depth + 1, seen), describe(v, depth + 1, seen))
                      for k, v in value.items())
        return None if any(a is None or b is None for a, b in parts) else ("dict", parts)
    if t is types.ModuleType:
        name = value.__name__
        return ("module", name) if sys.modules.get(name) is value else None
    if isinstance(value, np.dtype):
        return ("np.dtype", value.str)
    if isinstance(value, np.generic):
        return ("np.scalar", value.dtype.str, value.tobytes())
    if t is types.FunctionType:
        if _library(value):
            name = _named(value)
            return None if name is None else ("function", name)
        if value in seen:  # recursion: the function's own identity is being written
            return ("self", len(seen) - seen.index(value))
        return function_key(value, depth + 1, seen)
    if t in (types.BuiltinFunctionType, type) or isinstance(value, (np.ufunc, type)):
        if not _library(value) and not isinstance(value, np.ufunc):
            return None  # a user class: its methods are not read here
        name = _named(value)
        return None if name is None else ("object", name)
    from retrograd._dtype import dtype

    if t is dtype:
        return ("dtype", str(value))
    return None


def _global(fn: types.FunctionType, chain: tuple) -> tuple:
    """(found, value) of a dotted global name as the function would read it now."""
    name = chain[0]
    g = fn.__globals__
    if name in g:
        value = g[name]
    else:
        b = g.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else vars(b)
        if name not in b:
            return False, None
        value = b[name]
    for attr in chain[1:]:
        if not isinstance(value, types.ModuleType):
            break  # a method or attribute of a value: the value's own description covers it
        if not hasattr(value, attr):
            return False, None
        value = getattr(value, attr)
    return True, value


def function_key(fn: Any, depth: int = 0, seen: tuple = ()) -> Any:
    """The key of a plain Python function: its code, defaults, closure cells and the globals
    its code reads, each described; None if any of them cannot be."""
    if type(fn) is not types.FunctionType or depth > _MAX_DEPTH:
        return None
    seen = seen + (fn,)
    digest, chains = _analyse(fn.__code__)
    parts: list = [digest]
    for extra in (fn.__defaults__, fn.__kwdefaults__):
        d = describe(extra, depth, seen)
        if d is None:
            return None
        parts.append(d)
    for cell in fn.__closure__ or ():
        try:
            d = describe(cell.cell_contents, depth, seen)
        except ValueError:  # an empty cell (a name assigned after the function was made)
            return None
        if d is None:
            return None
        parts.append(d)
    for chain in chains:
        if chain[0] in _DYNAMIC:
            return None
        found, value = _global(fn, chain)
        d = describe(value, depth, seen) if found else ("missing",)
        if d is None:
            return None
        parts.append((chain, d))
    return ("code", tuple(parts))
