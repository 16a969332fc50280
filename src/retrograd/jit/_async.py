"""fork and wait. torch's fork runs the function at once when not compiled (the Future it
returns is already complete, and an exception is raised by fork itself); so does this."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd.futures import Future
from retrograd.jit._deprecation import warn_compile_path

__all__ = ["fork", "wait"]


def fork(func: Callable, *args: Any, **kwargs: Any) -> Future:
    warn_compile_path("fork")
    fut: Future = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future: Future) -> Any:
    warn_compile_path("wait")
    if not isinstance(future, Future):
        raise TypeError(f"wait(): expected a Future, got {type(future).__name__}")
    return future.wait()
