"""The allowlist of classes and functions retrograd.save / retrograd.load may handle by name.

torch's `weights_only` loading unpickles only allowlisted globals. retrograd.load never
unpickles; the allowlist here widens its closed set of types: an instance of an allowed class is
saved as its qualified name plus its state (`__getstate__()` or `__dict__`, itself saved in the
safe format), and loaded by looking the name up in this list (never by importing it) and
restoring the state. An allowed class or function can also be saved as a reference to itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_allowed: list = []  # classes / functions, or (object, "qualified.name") pairs


def qualified_name(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def _check(entries: list) -> None:
    if not isinstance(entries, list):
        raise TypeError(f"Expected a list of globals, got {type(entries).__name__}")
    for e in entries:
        ok = isinstance(e, tuple) and len(e) == 2 and isinstance(e[1], str) or callable(e)
        if not ok:
            raise ValueError(f"Expected safe globals to be a list of callables or (callable, "
                             f"str) tuples, got {e!r}")


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes / functions (or (object, "module.name") pairs) in save and load."""
    _check(safe_globals)
    _allowed.extend(safe_globals)


def get_safe_globals() -> list:
    return list(_allowed)


def clear_safe_globals() -> None:
    _allowed.clear()


@contextmanager
def safe_globals(safe_globals: list) -> Iterator[None]:
    """Allow these globals inside the block only."""
    _check(safe_globals)
    n = len(_allowed)
    _allowed.extend(safe_globals)
    try:
        yield
    finally:
        del _allowed[n:]


def allowed_by_name() -> dict[str, Any]:
    out = {}
    for e in _allowed:
        obj, name = e if isinstance(e, tuple) else (e, qualified_name(e))
        out[name] = obj
    return out


def name_if_allowed(obj: Any) -> str | None:
    """The registered name of obj (a class or function), or None if it is not allowed."""
    for e in _allowed:
        target, name = e if isinstance(e, tuple) else (e, None)
        if target is obj:
            return name or qualified_name(obj)
    return None


def object_state(obj: Any) -> Any:
    """What an allowed class's instance saves: its own __getstate__'s answer, else __dict__."""
    if type(obj).__getstate__ is not object.__getstate__:
        return obj.__getstate__()
    if hasattr(obj, "__dict__"):
        return dict(vars(obj))
    return None


def rebuild(cls: type, state: Any) -> Any:
    from enum import Enum

    if isinstance(cls, type) and issubclass(cls, Enum):
        return cls(state)
    obj = cls.__new__(cls)
    setstate = getattr(obj, "__setstate__", None)
    if setstate is not None:
        setstate(state)
    elif isinstance(state, dict):
        obj.__dict__.update(state)
    return obj


def not_allowed_message(name: str) -> str:
    short = name.rsplit(".", 1)[-1]
    return (f"Unsupported global: GLOBAL {name} was not an allowed global by default. Please "
            f"use `retrograd.serialization.add_safe_globals([{short}])` or the "
            f"`retrograd.serialization.safe_globals([{short}])` context manager to allowlist "
            f"this global if you trust this class/function.")
