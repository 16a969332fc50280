"""What user code can ask or say about being captured by retrograd.compile: is_compiling(),
functions kept out of a graph (disable, graph_break), and the markers that need no action here.

Capture runs the user's Python once under the tracer (NOTE [Compiler pipeline], stage 1); the
generated code then replays the recorded ops without running that Python again. So a branch on
is_compiling() is decided at capture time, as under torch.compile, and the variant's check
against eager (compiler.config.verify) runs the function with is_compiling() False: a function
whose results depend on the answer falls back to eager rather than disagree with it.

retrograd compiles a function as one graph or runs it eagerly (it has no graph breaks), so a
call that torch would leave out of its graph (a `disable`d function, `graph_break()`) makes the
whole call run eagerly, logged, and is an error under fullgraph=True, as in torch.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

_local = threading.local()


class capturing:
    """Marks the thread as capturing for the duration of a `with` block (nestable)."""

    def __enter__(self) -> None:
        _local.depth = getattr(_local, "depth", 0) + 1

    def __exit__(self, *exc: Any) -> None:
        _local.depth -= 1


def is_compiling() -> bool:
    """True while retrograd.compile captures the calling code (torch.compiler.is_compiling)."""
    return getattr(_local, "depth", 0) > 0


def is_exporting() -> bool:
    """False: retrograd has no export tracer (torch.compiler.is_exporting)."""
    return False


def refuse(what: str) -> None:
    """End the capture: the call runs eagerly (an error naming the user's line under
    fullgraph=True)."""
    from retrograd._compiler.capture import Unsupported, user_site

    raise Unsupported(what, user_site())


def graph_break() -> None:
    """torch._dynamo.graph_break(): under capture, the call runs eagerly (one graph or none)."""
    if is_compiling():
        refuse("graph_break() called")


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None,
            wrapping: bool = True) -> Any:
    """torch.compiler.disable: `fn` never runs inside a compiled graph. Called while a function
    is captured, it makes that call run eagerly (an error under fullgraph=True); given to
    retrograd.compile itself, it is not compiled. Without `fn`, a decorator. A module is
    disabled in place and returned (retrograd.compile also hands back the module itself)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason, wrapping=wrapping)
    if not callable(fn):
        raise AssertionError("fn must be callable")
    from retrograd.nn.modules.module import Module

    if isinstance(fn, Module):
        fn._compiled_call_impl = disable(fn._eager_call, recursive, reason=reason)
        fn._retrograd_disabled = fn._eager_call  # (so retrograd.compile leaves it alone)
        return fn
    original = getattr(fn, "_retrograd_disabled", fn)

    @functools.wraps(original)
    def disabled(*args: Any, **kwargs: Any) -> Any:
        if is_compiling():
            name = getattr(original, "__qualname__", repr(original))
            refuse(f"call to {name}, which is wrapped with retrograd.compiler.disable "
                    f"(reason: {reason})")
        return original(*args, **kwargs)

    disabled._retrograd_disabled = original  # type: ignore[attr-defined]
    return disabled


def is_disabled(fn: Any) -> bool:
    return hasattr(fn, "_retrograd_disabled")


def allow_in_graph(fn: Callable) -> Callable:
    """torch.compiler.allow_in_graph: `fn` as it is. Capture records the ops a function runs
    wherever they come from, so every function is already traced into the graph."""
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    """torch.compiler.assume_constant_result: `fn` as it is. A Python value it returns is a
    constant of the captured graph anyway; ops it runs are still recorded, which is the safe
    reading of torch's (unchecked) promise that the result never changes."""
    return fn


def nested_compile_region(fn: Callable | None = None, options: Any = None) -> Any:
    """torch.compiler.nested_compile_region: `fn` as it is. torch compiles such a region once
    and reuses it inside the enclosing graph; retrograd inlines its ops like any other call
    (the same results, without the compile-time saving)."""
    if fn is None:
        return lambda f: f
    return fn


def cudagraph_mark_step_begin() -> None:
    """torch.compiler.cudagraph_mark_step_begin: nothing to mark (no CUDA graphs here)."""
