"""__torch_function__: Tensor subclasses and function modes see the calls made on them.

NOTE [Torch function]
torch's first extension point, above autograd and above dispatch modes: when an op is called
with an instance of a Tensor subclass among its tensor arguments, or while a TorchFunctionMode
is active, the call is handed to `__torch_function__(func, types, args, kwargs)` (the mode's
first, then each subclass's, subclasses before their bases) instead of running. Tensor's own
`__torch_function__` runs `func` with subclass handling off and gives tensor results the
subclass's type, which is why `sub + 1` is a `sub`'s class in torch; a class opts out by
setting `__torch_function__ = torch._C._disabled_torch_function_impl` (Parameter does).

Here the op entry points carry it at no cost to plain tensors: once a class that takes part
has been defined (dispatch.torch_function_hook is set), an op entry sends a call with a Tensor
subclass argument to the dispatcher (dispatch.dispatch), whose first step is `on_dispatch`
below, and the generic runner goes there too; a function mode puts a pass-through marker on
the calling thread's dispatch modes while it is active, so every call goes there. `func` is the
entry point that was called (`retrograd.add`, `Tensor.add`, an `ops.aten` overload), with the
arguments split by the op's schema into positional and keyword ones.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from retrograd._autograd.state import state
from retrograd._ops import dispatch
from retrograd._tensor import Tensor

NOT_HANDLED = dispatch.NOT_HANDLED  # on_dispatch's answer when nothing takes the call


class _Local(threading.local):
    # (the switches are the autograd state's: backward turns them on, NOTE above)
    def __init__(self) -> None:
        self.modes: list = []  # this thread's TorchFunctionModes, innermost last


_local = _Local()


def disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """torch._C._disabled_torch_function_impl: the `__torch_function__` of a class that takes
    no part (its instances are treated as plain tensors); called, it runs func as it is."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


_takes_part: dict[type, bool] = {Tensor: False}


def takes_part(cls: type) -> bool:
    """Whether instances of `cls` (a Tensor subclass) send calls to its __torch_function__."""
    known = _takes_part.get(cls)
    if known is None:
        impl = getattr(cls, "__torch_function__", None)
        known = impl is not None and getattr(impl, "__func__", impl) is not \
            disabled_torch_function_impl
        _takes_part[cls] = known
    return known


def subclass_defined(cls: type) -> None:
    """Tensor.__init_subclass__: from the first class that takes part on, calls with subclass
    arguments reach the dispatcher (NOTE [Torch function])."""
    _takes_part.pop(cls, None)  # (a class defined again under the same object: ask anew)
    if takes_part(cls):
        dispatch.torch_function_hook[0] = on_dispatch


# --- the arguments that take part -----------------------------------------------------------


def _add_overloaded(found: list, arg: Any) -> None:
    """torch's order: one argument per type, a subclass before its bases, else in call order."""
    cls = type(arg)
    index = len(found)
    for i, old in enumerate(found):
        old_cls = type(old)
        if old_cls is cls:
            return
        if index == len(found) and issubclass(cls, old_cls):
            index = i
    found.insert(index, arg)


def overloaded_args(values: Iterable) -> list:
    """The arguments among `values` (and inside lists or tuples of them) whose class takes
    part, in dispatch order."""
    found: list = []
    for v in values:
        if isinstance(v, Tensor):
            if v.__class__ is not Tensor and takes_part(v.__class__):
                _add_overloaded(found, v)
        elif isinstance(v, (list, tuple)):
            for t in v:
                if isinstance(t, Tensor) and t.__class__ is not Tensor and \
                        takes_part(t.__class__):
                    _add_overloaded(found, t)
        elif hasattr(type(v), "__torch_function__") and not isinstance(v, type):
            _add_overloaded(found, v)  # a tensor-like object of another class
    return found


def _op_overloaded(op, args: tuple) -> list:
    found: list = []
    for i in op.tensor_idx:
        a = args[i]
        items = a if i in op.list_idx and isinstance(a, (list, tuple)) else (a,)
        for t in items:
            c = t.__class__
            if c is not Tensor and isinstance(t, Tensor) and takes_part(c):
                _add_overloaded(found, t)
    return found


def _split(op, args: tuple) -> tuple:
    """Schema-ordered arguments as a call: positional ones, keyword-only ones by name; trailing
    arguments still at their defaults are left out, as the caller most often left them."""
    schema_args = op.schema.args
    pos: list = []
    kw: dict = {}
    for a, v in zip(schema_args, args):
        if a.kwarg_only:
            if not _is_default(a, v):
                kw[a.name] = v
        else:
            pos.append(v)
    n = len(pos)
    while n and _is_default(schema_args[n - 1], pos[n - 1]):
        n -= 1
    return tuple(pos[:n]), kw


def _is_default(a, v: Any) -> bool:
    if not a.has_default and not a.type.endswith("?"):
        return False
    d = a.default
    if v is d:
        return True
    return type(v) is type(d) and type(v) in (bool, int, float, str) and v == d


# --- the calls ------------------------------------------------------------------------------


def on_dispatch(op, args: tuple, public) -> Any:
    """dispatch()'s first step: hand the call to the active function mode or to the
    subclasses' __torch_function__, or answer NOT_HANDLED."""
    if state.torch_function_off:
        return NOT_HANDLED
    overloaded = [] if state.torch_function_subclass_off else _op_overloaded(op, args)
    if not overloaded and not _local.modes:
        return NOT_HANDLED
    func = public if public is not None else dispatch.overload_of(op)
    pos, kw = _split(op, args)
    self_type: tuple = ()
    if not overloaded and pos and isinstance(pos[0], Tensor) and \
            getattr(func, "__qualname__", "").startswith("Tensor."):
        self_type = (type(pos[0]),)  # a mode sees a method's self among the types, as in torch
    return call_handlers(func, overloaded, pos, kw, self_type)


def public_function(fn: Any) -> Any:
    """A hand-written namespace function that makes tensors without an op on its tensor
    arguments (the factories: zeros, tensor, rand, zeros_like, ...): while a function mode is
    active, or given an instance of a class that takes part, it goes to __torch_function__
    first."""

    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> Any:
        if dispatch.torch_function_hook[0] is not None and not state.torch_function_off:
            overloaded = [] if state.torch_function_subclass_off else \
                overloaded_args(itertools.chain(args, kwargs.values()))
            if overloaded or _local.modes:
                return call_handlers(entry, overloaded, args, kwargs)
        return fn(*args, **kwargs)

    return entry


_warned_plain_method = [False]


def call_handlers(func, overloaded: list, args: tuple, kwargs: dict,
                  self_type: tuple = ()) -> Any:
    """torch's handle_torch_function once the arguments are known: the innermost mode first
    (popped while it runs), then each overloaded argument's class; NotImplemented passes on.
    (A mode's NotImplemented for a plain tensor's method is an error here too; torch hands
    the call to Tensor.__torch_function__ and recurses until the interpreter stops it.)"""
    types = tuple(type(a) for a in overloaded) or self_type
    mode = None
    if _local.modes and not state.torch_function_off:
        with pop_mode_temporarily() as mode:
            result = mode.__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        impl = arg.__torch_function__
        if getattr(impl, "__self__", None) is arg and not _warned_plain_method[0]:
            import warnings

            _warned_plain_method[0] = True  # once per process, as torch's
            warnings.warn("Defining your `__torch_function__` as a plain method is deprecated "
                          "and will be an error in future, please define it as a classmethod.",
                          UserWarning, stacklevel=3)
        result = impl(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    lines = [f"  - mode object {mode!r}"] if mode is not None else []
    lines += [f"  - tensor subclass {type(a)}" for a in overloaded]
    raise TypeError(f"Multiple dispatch failed for '{_qualified_name(func)}'; all "
                    "__torch_function__ handlers returned NotImplemented:\n\n" +
                    "\n".join(lines) +
                    "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented")


def _qualified_name(func) -> str:
    if isinstance(func, dispatch.OpOverload):
        return str(func)
    qual = getattr(func, "__qualname__", getattr(func, "__name__", repr(func)))
    if qual.startswith("Tensor."):
        return "torch." + qual
    return "torch." + qual


def default_torch_function(cls, func, types, args=(), kwargs=None) -> Any:
    """Tensor.__torch_function__: run func with subclass handling off, then give its tensor
    results the class `cls` (a subclass's results stay of its class)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        out = func(*args, **kwargs)
        if func in _no_wrap:
            return out
        return convert(out, cls)


_no_wrap: set = set()  # overrides.get_default_nowrap_functions(): results returned as they are


def convert(out: Any, cls: type) -> Any:
    """Tensor results of a call as instances of `cls` (aliases sharing their history)."""
    if cls is Tensor:
        return out
    if isinstance(out, Tensor) and not isinstance(out, cls):
        return out.as_subclass(cls)
    if isinstance(out, (tuple, list)):
        items = [convert(o, cls) for o in out]
        if hasattr(out, "_fields"):  # a named tuple of results (max's values, indices)
            return type(out)(*items)
        return type(out)(items)
    return out


# --- switches and modes ---------------------------------------------------------------------


class DisableTorchFunctionSubclass:
    """Inside, subclasses' __torch_function__ is not called (function modes still are)."""

    def __enter__(self) -> None:
        self._prev = state.torch_function_subclass_off
        state.torch_function_subclass_off = True

    def __exit__(self, *exc: Any) -> None:
        state.torch_function_subclass_off = self._prev


class DisableTorchFunction:
    """Inside, neither subclasses' __torch_function__ nor function modes are called."""

    def __enter__(self) -> None:
        self._prev = (state.torch_function_subclass_off, state.torch_function_off)
        state.torch_function_subclass_off = state.torch_function_off = True

    def __exit__(self, *exc: Any) -> None:
        state.torch_function_subclass_off, state.torch_function_off = self._prev


def enabled() -> bool:
    """torch._C._is_torch_function_enabled."""
    return not state.torch_function_subclass_off


def all_disabled() -> bool:
    """torch._C._is_torch_function_all_disabled."""
    return state.torch_function_off


class _ModeMarker:
    """On the thread's dispatch modes while a function mode is active, so that every op entry
    reaches dispatch(); as a dispatch mode it passes each op on."""

    _internal = True  # not a mode users see (utils._python_dispatch)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def push_mode(mode: Any) -> None:
    modes = _local.modes
    if not modes:
        marker = _local.marker = _ModeMarker()
        dispatch.push_mode(marker)
        dispatch.torch_function_hook[0] = on_dispatch
    modes.append(mode)


def pop_mode() -> Any:
    modes = _local.modes
    if not modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = modes.pop()
    if not modes:
        dispatch.pop_mode(_local.marker)
    return mode


@contextmanager
def pop_mode_temporarily() -> Iterator[Any]:
    """The innermost function mode, off the stack while the block runs (torch's
    _pop_mode_temporarily): the calls its handler makes go to the modes below it."""
    modes = _local.modes
    mode = modes.pop()
    try:
        yield mode
    finally:
        modes.append(mode)


def mode_stack() -> list:
    """The calling thread's function modes, innermost last."""
    return _local.modes


# --- Tensor's part --------------------------------------------------------------------------


def on_subclass(fn: Any) -> Any:
    """A hand-written Tensor method that makes its result without calling an op on self
    (detach, .data, new_zeros, ...): called on an instance of a class that takes part, it goes
    to __torch_function__ first, as every Tensor method does in torch."""

    @functools.wraps(fn)
    def method(self, *args: Any, **kwargs: Any) -> Any:
        cls = self.__class__
        if cls is not Tensor and not state.torch_function_subclass_off and takes_part(cls):
            return call_handlers(method, [self], (self,) + args, kwargs)
        return fn(self, *args, **kwargs)

    return method


def _tensor_init_subclass(cls, **kwargs: Any) -> None:
    super(Tensor, cls).__init_subclass__(**kwargs)
    impl = getattr(cls, "__torch_function__", None)
    if getattr(cls, "__torch_dispatch__", None) is not None and \
            getattr(impl, "__func__", None) is default_torch_function:
        # as torch: a class that dispatches its ops and keeps Tensor's __torch_function__
        # takes no part (its ops' results are what its __torch_dispatch__ makes them)
        cls.__torch_function__ = disabled_torch_function_impl  # type: ignore[attr-defined]
    subclass_defined(cls)


def install() -> None:
    """Give Tensor its default __torch_function__ and have each new subclass announced."""
    Tensor.__torch_function__ = classmethod(default_torch_function)  # type: ignore[attr-defined]
    Tensor.__init_subclass__ = classmethod(_tensor_init_subclass)  # type: ignore[assignment]
    Tensor.detach = on_subclass(Tensor.detach)  # type: ignore[method-assign]
    Tensor.backward = on_subclass(Tensor.backward)  # type: ignore[method-assign]
    data: Any = Tensor.__dict__["data"]
    wrapped = property(on_subclass(data.fget), data.fset, data.fdel, data.__doc__)
    Tensor.data = wrapped  # type: ignore[assignment]
    # torch's get_default_nowrap_functions: .grad's and ._base's getters
    _no_wrap.update({Tensor.grad.fget, Tensor._base.fget})  # type: ignore[attr-defined]
