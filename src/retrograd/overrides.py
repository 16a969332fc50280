"""torch.overrides: the __torch_function__ protocol's public helpers and TorchFunctionMode
(NOTE [Torch function]), and the dispatch helper for __torch_dispatch__ subclasses."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from retrograd._autograd.state import state
from retrograd._ops import torch_function as _tf
from retrograd._tensor import Tensor

__all__ = ["TorchFunctionMode", "BaseTorchFunctionMode", "enable_reentrant_dispatch",
           "get_default_nowrap_functions", "get_ignored_functions", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function"]


class TorchFunctionMode:
    """A context manager whose `__torch_function__(func, types, args, kwargs)` receives every
    call made on this thread while it is active (the innermost mode first), before any Tensor
    subclass's; it is off its stack while its handler runs, so calls it makes go below it."""

    inner: TorchFunctionMode

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchFunctionMode:
        _tf.push_mode(self)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        _tf.pop_mode()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        from retrograd import _warning_site as _ws

        _ws.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                 "`with Mode()`", stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs each call unchanged: subclass it and override what it should see."""

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        return func(*args, **(kwargs or {}))


def _get_current_function_mode() -> TorchFunctionMode | None:
    stack = _tf.mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list:
    return list(_tf.mode_stack())


@contextlib.contextmanager
def _pop_mode_temporarily() -> Iterator[TorchFunctionMode]:
    with _tf.pop_mode_temporarily() as mode:
        yield mode


def _is_torch_function_mode_enabled() -> bool:
    return bool(_tf.mode_stack()) and not _tf.all_disabled()


def has_torch_function(relevant_args: Iterable) -> bool:
    """Whether a call with these arguments would go to a __torch_function__: one of them is of
    a class that takes part, or a function mode is active (and the protocol is not disabled)."""
    if _tf.all_disabled():
        return False
    if _tf.mode_stack():
        return True
    if not _tf.enabled():
        return False
    return any(type(a) is not Tensor and _takes_part(a) for a in relevant_args)


def _takes_part(a: Any) -> bool:
    if isinstance(a, Tensor):
        return _tf.takes_part(type(a))
    return hasattr(type(a), "__torch_function__") and not isinstance(a, type)


def has_torch_function_unary(obj: Any) -> bool:
    return has_torch_function((obj,))


def has_torch_function_variadic(*args: Any) -> bool:
    return has_torch_function(args)


def handle_torch_function(public_api: Callable, relevant_args: Iterable, *args: Any,
                          **kwargs: Any) -> Any:
    """Call the __torch_function__ that `public_api(*args, **kwargs)` goes to: the innermost
    function mode's, then those of the arguments' classes in `relevant_args` (subclasses before
    their bases); a TypeError if every one returns NotImplemented."""
    overloaded = [] if not _tf.enabled() else _tf.overloaded_args(relevant_args, True)
    return _tf.call_handlers(public_api, overloaded, args, kwargs)


def is_tensor_like(inp: Any) -> bool:
    """A Tensor, or an object whose type defines __torch_function__."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether func is a method or property of Tensor (as the protocol passes them)."""
    name = getattr(func, "__name__", None)
    return name is not None and getattr(Tensor, name, None) is func or \
        isinstance(func, property)


def get_default_nowrap_functions() -> set:
    """The functions whose results Tensor.__torch_function__ returns as they are."""
    return _tf._no_wrap


def get_ignored_functions() -> set:
    """Public functions that never go to __torch_function__ (they take no tensor, or only
    read a tensor's type)."""
    import retrograd

    names = ("is_tensor", "is_storage", "typename", "set_default_dtype", "get_default_dtype",
             "set_default_tensor_type", "set_grad_enabled", "is_grad_enabled", "manual_seed",
             "seed", "initial_seed", "get_rng_state", "set_rng_state", "compile")
    return {getattr(retrograd, n) for n in names if hasattr(retrograd, n)}


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """A decorator: the wrapped function goes to __torch_function__ for the arguments that
    `dispatcher(*args, **kwargs)` names as relevant."""
    import functools

    def inner(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


@contextlib.contextmanager
def enable_reentrant_dispatch() -> Iterator[None]:
    """Inside a __torch_dispatch__, ops record a graph again as they would outside it (the
    handler runs below autograd, where they record none)."""
    prev = state.grad_enabled
    if state.dispatch_outer_grad is not None:
        state.grad_enabled = state.dispatch_outer_grad
    try:
        yield
    finally:
        state.grad_enabled = prev
