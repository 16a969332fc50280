"""Grad-mode context managers (also usable as decorators), thread-local as in torch.

NOTE [Decorating generators]
A decorated generator function runs its body only while it is iterated, and it hands control
back to its caller at every `yield`. So the mode must be entered each time the generator resumes
(send, throw, close) and left each time it suspends: the caller's own mode holds between items.
`_wrap_generator` drives the wrapped generator one step at a time, each step inside a fresh
context manager. Coroutine functions (`async def`) are wrapped like plain functions, as torch
does: the mode holds only while the coroutine object is created.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any

from retrograd import _warning_site as _ws
from retrograd._autograd.state import is_grad_enabled, is_inference_mode_enabled, state

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "set_multithreading_enabled",
           "is_multithreading_enabled"]

CLASS_DECORATION = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only "
    "decorate functions or methods. To preserve the current behavior of class decoration, you "
    "can directly decorate the `__init__` method and nothing else."
)


def _wrap_generator(make_ctx: Callable, gen_fn: Callable) -> Callable:
    """A generator function that runs each step of gen_fn's generator under make_ctx()."""

    @functools.wraps(gen_fn)
    def generator_context(*args: Any, **kwargs: Any):
        gen = gen_fn(*args, **kwargs)
        try:
            with make_ctx():
                item = gen.send(None)
            while True:
                try:
                    sent = yield item
                except GeneratorExit:
                    # our caller closes us: let the inner generator clean up in its mode
                    with make_ctx():
                        gen.close()
                    raise
                except BaseException:
                    with make_ctx():
                        item = gen.throw(*sys.exc_info())
                else:
                    with make_ctx():
                        item = gen.send(sent)
        except StopIteration as stop:
            return stop.value

    return generator_context


def _decorate(make_ctx: Callable, fn: Callable) -> Callable:
    if inspect.isclass(fn):
        raise RuntimeError(
            "Cannot decorate classes; it is ambiguous whether or not only the constructor or "
            "all methods should have the context manager applied; additionally, decorating a "
            "class at definition-site will prevent use of the identifier as a conventional "
            "type.  To specify which methods to decorate, decorate each of them individually.")
    if inspect.isgeneratorfunction(fn):
        return _wrap_generator(make_ctx, fn)

    @functools.wraps(fn)
    def decorate_context(*args: Any, **kwargs: Any):
        with make_ctx():
            return fn(*args, **kwargs)

    return decorate_context


class _DecoratorContextManager:
    """A context manager that is also a decorator (the function runs inside the context)."""

    def __call__(self, fn: Callable) -> Callable:
        if inspect.isclass(fn):
            _ws.warn(CLASS_DECORATION, FutureWarning, stacklevel=2)
            cls = fn

            def fn(*args: Any, **kwargs: Any):  # only construction runs in the mode
                return cls(*args, **kwargs)

        return _decorate(self.clone, fn)

    def clone(self):
        return type(self)()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable bare: `@no_grad` as well as `@no_grad()`."""

    def __new__(cls, orig_func: Callable | None = None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Inside, ops record no graph (results do not require grad); also a decorator.

    >>> import retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    >>> @torch.no_grad()
    ... def double(t):
    ...     return t * 2
    >>> double(x).requires_grad
    False
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc: Any) -> None:
        state.grad_enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Inside, ops record graph again, even within no_grad; also a decorator.

    >>> import retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     with torch.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    def __enter__(self) -> None:
        self.prev = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc: Any) -> None:
        state.grad_enabled = self.prev


def _check_bool(mode: Any, fn: str, arg: str) -> None:
    if not isinstance(mode, bool):
        raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be bool, not "
                        f"{type(mode).__name__}")


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode at construction (so it works as a plain call too), restores on exit.

    Used as a decorator, the construction's change is undone: only the decorated function
    runs in the mode.

    >>> import retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.set_grad_enabled(False):
    ...     (x * 2).requires_grad
    False
    >>> _ = torch.set_grad_enabled(False)  # a plain call switches it until switched back
    >>> torch.is_grad_enabled()
    False
    >>> _ = torch.set_grad_enabled(True)
    >>> (x * 2).requires_grad
    True
    """

    def __init__(self, mode: bool) -> None:
        _check_bool(mode, "set_grad_enabled", "enabled")
        self.prev = state.grad_enabled
        self.mode = mode
        state.grad_enabled = mode

    def __call__(self, fn: Callable) -> Callable:
        state.grad_enabled = self.prev
        return super().__call__(fn)

    def __enter__(self) -> None:
        state.grad_enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        state.grad_enabled = self.prev

    def __repr__(self) -> str:
        return f"retrograd.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

    def clone(self):
        return set_grad_enabled(self.mode)


class inference_mode(_DecoratorContextManager):
    """No graph is recorded; tensors made inside are inference tensors (no version counter).

    >>> import retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.inference_mode():
    ...     y = x * 2
    >>> y.requires_grad, y.is_inference()
    (False, True)
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __new__(cls, mode: Any = True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __enter__(self) -> None:
        self.prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled = False
            state.inference = True
        else:
            state.inference = False

    def __exit__(self, *exc: Any) -> None:
        state.grad_enabled, state.inference = self.prev

    def clone(self):
        return inference_mode(self.mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """Whether backward may run on worker threads (thread-local). retrograd's engine runs on
    the calling thread either way; the flag is kept so code that sets and reads it works."""

    def __init__(self, mode: bool) -> None:
        self.prev = state.multithreading
        self.mode = bool(mode)
        state.multithreading = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        state.multithreading = self.prev

    def clone(self):
        return set_multithreading_enabled(self.mode)


def is_multithreading_enabled() -> bool:
    return state.multithreading
