"""Decorators that tell the TorchScript compiler what to compile, skip or drop. With no
compiler they give back what they decorate, so the decorated code runs as written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from retrograd import _warning_site as _ws

F = TypeVar("F")

__all__ = ["_overload", "_overload_method", "export", "ignore", "unused"]


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """`@ignore` or `@ignore(drop=...)`: the function stays a Python function."""
    if callable(drop):  # used bare: `drop` is the decorated function
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(
            f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    if kwargs.pop("drop_on_export", None):
        _ws.warn(
            "ignore(drop_on_export=True) has been deprecated. TorchScript will now drop the "
            "function call on compilation. Use torch.jit.unused now. {}",
            FutureWarning, stacklevel=2)
    elif drop:
        _ws.warn(
            "ignore(True) has been deprecated. TorchScript will now drop the function call on "
            "compilation. Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)

    def decorator(fn: F) -> F:
        return fn

    return decorator


def unused(fn: F) -> F:
    """Compiled TorchScript replaces the body with a raise; run eagerly, the body runs."""
    return fn


def export(fn: F) -> F:
    """Marks a method for compilation besides forward; eagerly every method is callable."""
    return fn


def _overload(func: Callable) -> Callable:
    """A typed declaration of an overloaded function; the later full definition of the same
    name is what Python calls."""
    return func


def _overload_method(func: Callable) -> Callable:
    return func
