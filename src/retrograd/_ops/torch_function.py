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
has been defined (dispatch.torch_function_hook is set, the class is in `parts`), an op entry
sends a call with an instance of such a class among its tensor arguments to the dispatcher
(dispatch.dispatch), whose first step is `on_dispatch` below, and the generic runner asks
`on_dispatch` too; a Parameter, which takes no part, stays on the fast path. A function mode
puts a pass-through marker on the calling thread's dispatch modes while it is active, so every
call goes to the dispatcher. `func` is the entry point that was called (`retrograd.add`,
`Tensor.add`, an `ops.aten` overload), with the arguments split by the op's schema into
positional and keyword ones.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from retrograd import _warning_site as _ws
from retrograd._autograd.state import state
from retrograd._generated import forwarding_signature
from retrograd._numpy_names import numpy_names_signature
from retrograd._ops import dispatch
from retrograd._ops.codegen import compile_function
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
# the classes that take part (a hand-written entry looks for them among its arguments and the
# items of its list and tuple arguments, NOTE [Torch function entries])
parts: set = dispatch.torch_function_parts
modes_active = [0]  # function modes entered on any thread (each thread keeps its own stack)


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
        parts.add(cls)


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


def overloaded_args(values: Iterable, tensor_likes: bool = False) -> list:
    """The arguments among `values` (and inside lists or tuples of them) whose class takes
    part, in dispatch order; with `tensor_likes`, objects of other classes that define
    __torch_function__ too (overrides.handle_torch_function's duck types; retrograd's own
    entries leave them out: a torch.Tensor handed to from_dlpack is data, not a handler)."""
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
        elif tensor_likes and hasattr(type(v), "__torch_function__") and \
                not isinstance(v, type):
            _add_overloaded(found, v)  # a tensor-like object of another class
    return found


def _op_overloaded(op, args: tuple) -> list:
    found: list = []
    for i in op.tensor_idx:
        a = args[i]
        if a.__class__ in parts:
            _add_overloaded(found, a)
        elif i in op.list_idx and isinstance(a, (list, tuple)):
            for t in a:
                if t.__class__ in parts:
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
            _warned_plain_method[0] = True  # once per process, as torch's
            _ws.warn("Defining your `__torch_function__` as a plain method is deprecated "
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
    """torch's name of the called function in its error ('torch.add', 'torch.Tensor.sin')."""
    if isinstance(func, dispatch.OpOverload):
        return str(func)
    return "torch." + getattr(func, "__qualname__", getattr(func, "__name__", repr(func)))


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
    modes_active[0] += 1


def pop_mode() -> Any:
    modes = _local.modes
    if not modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = modes.pop()
    modes_active[0] -= 1
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
    # methods written on Tensor itself that make a tensor without an op on self: entries as
    # the registered ones get (NOTE [Torch function entries])
    Tensor.detach = entry(Tensor.detach, "detach", True)  # type: ignore[method-assign]
    Tensor.backward = entry(Tensor.backward, "backward", True)  # type: ignore[method-assign]
    data: Any = Tensor.__dict__["data"]
    wrapped = property(entry(data.fget, "data", True), data.fset, data.fdel, data.__doc__)
    Tensor.data = wrapped  # type: ignore[assignment]
    # torch's get_default_nowrap_functions: .grad's and ._base's getters
    _no_wrap.update({Tensor.grad.fget, Tensor._base.fget})  # type: ignore[attr-defined]


# --- the hand-written entry points ------------------------------------------------------------

# NOTE [Torch function entries]
# The generated op entries hand a call to __torch_function__ on their slow path (on_dispatch).
# A hand-written public function (a composite such as F.layer_norm, a factory, x[i], x.view)
# gets a generated entry with its own signature that does so first, so a handler sees the
# function the user called with the arguments they gave (trailing ones still at their
# defaults left out), once: Tensor's default handler runs it with subclass calls off, so the
# ops it is made of are no calls of their own. With no class that takes part and no function
# mode, the entry costs one test of a list item before it calls the function.

_NOT_GIVEN = object()
_SEQUENCES = (list, tuple)

# functions that never go to __torch_function__ in torch (they read or set process state)
_NOT_ENTRIES = frozenset({"manual_seed", "seed", "initial_seed", "get_rng_state",
                          "set_rng_state", "set_printoptions", "as_subclass"})
# the dunder methods that go to it (others, like __dlpack__, stay as they are)
_DUNDER_ENTRIES = frozenset({"__getitem__", "__setitem__", "__contains__", "__reversed__",
                             "__matmul__", "__rmatmul__", "__rdiv__", "__rtruediv__"})


def wrap_entries(tables: Iterable[tuple]) -> None:
    """Replace each hand-written function of the (table, is_method) pairs by its entry."""
    for table, is_method in tables:
        made: dict = {}  # function -> its entry: an alias (__matmul__ of matmul) shares it
        # a function's own name first, so the entry that aliases share carries it
        names = sorted(table, key=lambda n: getattr(table[n], "__name__", None) != n)
        for name in names:
            fn = table[name]
            if type(fn) is not types.FunctionType or hasattr(fn, "__retrograd_source__") or \
                    name in _NOT_ENTRIES or \
                    name.startswith("_") and name not in _DUNDER_ENTRIES:
                continue
            if fn not in made:
                made[fn] = entry(fn, name, is_method)
            table[name] = made[fn]


def entry(fn: Callable, name: str, is_method: bool) -> Callable:
    """fn behind a generated entry of its own signature (NOTE [Torch function entries]); one
    marked by numpy_names takes NumPy's argument names (NOTE [NumPy argument names])."""
    numpy_names = getattr(fn, "__numpy_names__", False)
    ns: dict = {"_tf_fn": fn, "_tf_hook": dispatch.torch_function_hook, "_tf_state": state,
                "_tf_handle": handle_entry, "_tf_not": NOT_HANDLED, "_tf_parts": parts,
                "_tf_seq": _SEQUENCES, "_tf_any": _any_part, "_tf_modes": modes_active}
    params, call = forwarding_signature(fn, ns, "_tf_d")
    signature = inspect.signature(fn).parameters.values()
    pos = [p.name for p in signature if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    kw = [p.name for p in signature if p.kind is p.KEYWORD_ONLY]
    star = next((p.name for p in signature if p.kind is p.VAR_POSITIONAL), None)
    dstar = next((p.name for p in signature if p.kind is p.VAR_KEYWORD), None)
    given_default = {p.name: _NOT_GIVEN if p.default is p.empty else p.default for p in signature}
    pos_defaults = [given_default[n] for n in pos]
    kw_defaults = {n: given_default[n] for n in kw}
    ns["_tf_meta"] = (is_method, tuple(pos_defaults), kw_defaults)
    given = "(" + "".join(f"{n}, " for n in pos) + ")"
    kwargs = "{" + ", ".join(f"{n!r}: {n}" for n in kw) + "}"
    # a call goes to the handlers only if a mode is active or an argument (or an item of a
    # list or tuple argument) is an instance of a class that takes part
    tests = ["_tf_modes[0]"] + [f"{n}.__class__ in _tf_parts or {n}.__class__ in _tf_seq and "
                                f"_tf_any({n})" for n in pos + kw]
    tests += [f"_tf_any({star})"] if star else []
    tests += [f"_tf_any({dstar}.values())"] if dstar else []
    qualname = f"Tensor.{name}" if is_method else name
    guard: list = []
    if numpy_names:
        params, guard = numpy_names_signature(params, ns, name, qualname)
    lines = [f"def {name}({', '.join(params)}):", *guard,
             "    if _tf_hook[0] is not None and not _tf_state.torch_function_off and (",
             *[f"            {t} or" for t in tests[:-1]], f"            {tests[-1]}):",
             f"        _tf_r = _tf_handle({name}, _tf_meta, {given}, {star or '()'}, {kwargs}, "
             f"{dstar or '{}'})",
             "        if _tf_r is not _tf_not:",
             "            return _tf_r",
             f"    return _tf_fn({', '.join(call)})"]
    wrapper = compile_function(name, lines, ns, f"{qualname} entry", qualname)
    # fn's module, doc, annotations and attributes; __wrapped__ for inspect's signature and
    # source; the public name (F.layer_norm is "layer_norm", as torch's)
    functools.update_wrapper(wrapper, fn)
    wrapper.__name__ = name
    wrapper.__qualname__ = qualname
    _ws.ENTRY_CODES.add(wrapper.__code__)  # warnings point past it
    return wrapper


def _any_part(values: Iterable) -> bool:
    """Whether any of `values`, or any item of a list or tuple among them, is an instance of
    a class that takes part."""
    for v in values:
        c = v.__class__
        if c in parts:
            return True
        if c is list or c is tuple:
            for t in v:
                if t.__class__ in parts:
                    return True
    return False


def _may_take_part(given: tuple, star: tuple, kw: dict, extra: dict) -> bool:
    """Whether any argument, or any item of a list or tuple argument, is an instance of a
    class that takes part."""
    return _any_part(itertools.chain(given, star, kw.values(), extra.values()))


def handle_entry(public: Callable, meta: tuple, given: tuple, star: tuple, kw: dict,
                 extra: dict) -> Any:
    """A hand-written entry's call, to the handlers if a class that takes part or a function
    mode is there (NOT_HANDLED otherwise)."""
    if not _local.modes and not _may_take_part(given, star, kw, extra):
        return NOT_HANDLED  # (a list or tuple holding no such instance, or another thread's mode)
    is_method, pos_defaults, kw_defaults = meta
    if not star:
        n = len(given)
        while n and given[n - 1] is pos_defaults[n - 1]:
            n -= 1
        given = given[:n]
    args = given + tuple(star)
    kwargs = {k: v for k, v in kw.items() if v is not kw_defaults[k]}
    kwargs.update(extra)
    overloaded = [] if state.torch_function_subclass_off else \
        overloaded_args(itertools.chain(args, kwargs.values()))
    if not overloaded and not _local.modes:
        return NOT_HANDLED
    self_type: tuple = ()
    if is_method and not overloaded and args and isinstance(args[0], Tensor):
        self_type = (type(args[0]),)
    return call_handlers(public, overloaded, args, kwargs, self_type)
