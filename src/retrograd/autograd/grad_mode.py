"""Grad-mode context managers (also usable as decorators), thread-local as in torch."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from retrograd._autograd.state import is_grad_enabled, is_inference_mode_enabled, state

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]


class _DecoratorContextManager:
    """A context manager that is also a decorator (the function runs inside the context)."""

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
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

    def __enter__(self) -> None:
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc: Any) -> None:
        state.grad_enabled = self.prev


class enable_grad(_DecoratorContextManager):
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


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode at construction (so it works as a plain call too), restores on exit.

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
        self.prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __enter__(self) -> None:
        state.grad_enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        state.grad_enabled = self.prev

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
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

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
