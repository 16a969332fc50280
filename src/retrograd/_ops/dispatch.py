"""The one interception point every op passes through: a stack of dispatch modes.

A mode (retrograd.utils._python_dispatch.TorchDispatchMode) sees each op before it runs, as
`__torch_dispatch__(func, types, args, kwargs)`, and decides what to return; tracers, loggers,
FLOP counters and allow_mutation_on_saved_tensors are modes. With no mode active the runner pays
one truth test of `mode_stack`.

NOTE [Per-thread dispatch modes]
A mode entered with `with mode:` belongs to the thread that entered it: the ops of other
threads never reach it (a tracer in one thread must not record, or break, another thread's
eager work), as torch keeps its mode stack per thread. `mode_stack` holds every active mode of
every thread, so the runner's truth test stays one list test; `_local.own` is the calling
thread's own stack, which dispatch pops while a mode runs its op. A mode put on `mode_stack`
directly (autocast's, which keeps its per-thread state itself) or whose class sets
`_all_threads` (the profiler's) is shared: it sees every thread's ops, below the thread's own
modes. The forward-AD mode is the exception (NOTE [Forward AD above modes]). With a mode
active in another thread only, an op pays one call into dispatch, which runs it eagerly.
Tensor's conversions to Python (item, bool, ...) ask the thread's own modes through
data_dependent() only while some mode is active.
"""

from __future__ import annotations

import threading

from retrograd._autograd.state import mode_stack  # one list object for the process
from retrograd._ops import registry as _registry  # (a module object: registry imports this one)


class _Local(threading.local):
    def __init__(self) -> None:
        self.own: list = []  # this thread's entered modes, innermost last
        self.shared_hidden = 0  # shared modes now running an op on this thread (from the top)
        self.forward_hidden = 0  # the forward-AD mode is running an op on this thread


# NOTE [Forward AD above modes]
# In torch, forward AD lives in the autograd layer, above the Python dispatch modes: a mode
# entered around a jvp sees the primal op and then the ops that compute its tangent (sin, then
# cos and mul), so a FLOP counter counts them and a tracer records them. Here the forward-AD
# mode (shared: dual levels are global, as torch's) therefore goes first, before the thread's
# own modes, and is counted apart from the other shared modes (`forward_hidden`, not
# `shared_hidden`); while it runs an op, the ops it makes go on to the modes below it.
forward_ad_mode: list = [None]  # the forward-AD mode object, set by _ops.forward_ad


_local = _Local()
_entered: dict = {}  # id(mode) -> how many times a thread entered it (the rest are shared)


def push_mode(mode) -> None:
    """Enter `mode` for the calling thread (for every thread if its class sets
    `_all_threads`, as the profiler's does: it records what each thread runs)."""
    if getattr(mode, "_all_threads", False):
        mode_stack.append(mode)
        return
    _entered[id(mode)] = _entered.get(id(mode), 0) + 1
    _local.own.append(mode)
    mode_stack.append(mode)


def pop_mode(mode) -> None:
    if getattr(mode, "_all_threads", False):
        mode_stack.remove(mode)
        return
    n = _entered.get(id(mode), 0) - 1
    if n > 0:
        _entered[id(mode)] = n
    else:
        _entered.pop(id(mode), None)
    own = _local.own
    for i in range(len(own) - 1, -1, -1):
        if own[i] is mode:
            del own[i]
            break
    for i in range(len(mode_stack) - 1, -1, -1):
        if mode_stack[i] is mode:
            del mode_stack[i]
            break


def all_shared() -> list:
    """The shared modes, bottom first, hidden or not (the forward-AD mode is not one)."""
    forward = forward_ad_mode[0]
    return [m for m in mode_stack if id(m) not in _entered and m is not forward]


def _shared() -> list:
    shared = all_shared()
    return shared[:len(shared) - _local.shared_hidden]


def _forward_ad_first():
    """The forward-AD mode if the calling thread's next op goes to it first, else None."""
    forward = forward_ad_mode[0]
    if forward is None or _local.forward_hidden or forward not in mode_stack:
        return None
    return forward


def current_mode():
    """The mode the calling thread's next op goes to, or None."""
    if not mode_stack:
        return None
    forward = _forward_ad_first()
    if forward is not None:
        return forward
    own = _local.own
    if own:
        return own[-1]
    shared = _shared()
    return shared[-1] if shared else None


def visible_modes() -> list:
    """The modes the calling thread's ops reach, innermost first."""
    if not mode_stack:
        return []
    forward = _forward_ad_first()
    return ([forward] if forward is not None else []) + list(reversed(_local.own)) + \
        list(reversed(_shared()))


def own_modes() -> list:
    """The modes the calling thread entered (innermost last)."""
    return _local.own


def _tell_modes(hook_name: str, *args) -> None:
    """Call `hook_name(*args)` on each mode of this thread that has it, innermost first."""
    for mode in reversed(_local.own):
        hook = getattr(mode, hook_name, None)
        if hook is not None:
            hook(*args)


def data_dependent(tensor, what: str) -> None:
    """Tensor.item(), bool(), tolist(), numpy(), float(), int(), index() call this while any
    mode is active: a mode of this thread with `_on_data_dependent` may refuse (a tracer that
    cannot put Python values read from tensors into its graph)."""
    _tell_modes("_on_data_dependent", tensor, what)


def uncapturable(what: str) -> None:
    """A construct a graph tracer cannot record was entered (forward-mode AD, vmap): a mode of
    this thread with `_on_uncapturable` may refuse it, so a compiler runs the function eagerly
    instead of recording half of it."""
    _tell_modes("_on_uncapturable", what)


def random_drawn(kernel, args: tuple, out) -> None:
    """A random draw made outside the declared ops (dropout's noise, rand, randn, ...) while
    any mode is active: `kernel(*args)` gave `out`. A mode of this thread with `_on_random_draw`
    may record it (a compiler's tracer puts the draw into its graph, NOTE [Random draws in
    compiled graphs])."""
    _tell_modes("_on_random_draw", kernel, args, out)


def tensor_made(kernel, args: tuple, out) -> None:
    """A factory (zeros, ones, full, empty and their *_like forms) made the fresh array `out` as
    `kernel(*args)` while any mode is active: a mode of this thread with `_on_tensor_made` may
    record it (a compiler's tracer makes it again at every call, NOTE [Factories in compiled
    graphs])."""
    _tell_modes("_on_tensor_made", kernel, args, out)


# NOTE [Autocast composites]
# retrograd.amp's autocast is a dispatch mode, so it sees the ops that functions are made of.
# torch's autocast sees some of those functions whole (linear, matmul, convNd, cross_entropy and
# the other composite losses) and casts their inputs once at entry. While CPU autocast is on,
# `autocast` is its mode, and those functions start with
#     if dispatch.autocast is not None: a, b = dispatch.autocast.cast("lower", a, b)
# ("lower" for the lower-precision list, "fp32" for the float32 list); otherwise it is None and
# costs that one test.
autocast = None


# (the forward-AD mode, its fast paths by op): when that mode is the only one active and is
# not running an op on this thread, an op may be done without it (NOTE [Dual fast path])
dual_fast: list = [None, None]


# (the wrapper-subclass dispatcher, its function for an op while it is the only mode): the same
# shortcut for it, taken while wrapper tensors (vmap's batched values, ...) are alive
subclass_alone: list = [None, None]


def only_subclass_mode() -> bool:
    """Whether the one active mode is the wrapper-subclass dispatcher (which records nothing)."""
    return len(mode_stack) == 1 and mode_stack[0] is subclass_alone[0]


# NOTE [Torch function]: torch_function.on_dispatch, set once a Tensor subclass that takes part
# is defined or a function mode is entered; it answers NOT_HANDLED for calls it leaves alone
torch_function_hook: list = [None]
NOT_HANDLED = object()
# the Tensor subclasses that take part (an op entry sends a call with an instance of one to
# dispatch(); Parameter and other opted-out subclasses stay on the fast path)
torch_function_parts: set = set()


def dispatch(op, args: tuple, public=None):
    """Run op on args through the active modes; `public`: the entry point the user called."""
    hook = torch_function_hook[0]
    if hook is not None:
        out = hook(op, args, public)
        if out is not NOT_HANDLED:
            return out
    local = _local
    if len(mode_stack) == 1 and not local.shared_hidden and not local.forward_hidden:
        # one mode on the stack, entered by no thread (both are shared ones)
        alone = mode_stack[0]
        if alone is dual_fast[0]:
            out = dual_fast[1][op](args)
            if out is not NotImplemented:
                return out
        elif alone is subclass_alone[0]:
            return subclass_alone[1](op, args)
    forward = forward_ad_mode[0]
    if forward is not None and not local.forward_hidden and forward in mode_stack:
        local.forward_hidden += 1
        try:
            return forward.__torch_dispatch__(overload_of(op), (), args, {})
        finally:
            local.forward_hidden -= 1
    own = local.own
    if own:
        mode = own.pop()
        try:
            return mode.__torch_dispatch__(overload_of(op), (), args, {})
        finally:
            own.append(mode)
    shared = _shared()
    if not shared:  # only other threads have modes
        return _registry.run_eager(op, args)
    _local.shared_hidden += 1
    try:
        return shared[-1].__torch_dispatch__(overload_of(op), (), args, {})
    finally:
        _local.shared_hidden -= 1


_overloads: dict = {}  # OpDef -> its one OpOverload, so modes can compare ops with `is`


def overload_of(op) -> OpOverload:
    ov = _overloads.get(op)
    if ov is None:
        ov = _overloads[op] = OpOverload(op)
    return ov


def replay(func: OpOverload, args: tuple, outputs):
    """Run func's autograd part on `args` with `outputs` (tensors computed earlier) standing in
    for its forward: the node is built and saves what it saves, the kernel does not run (an
    in-place op gets the earlier result written into its argument)."""
    import copy

    if func.__class__ is not OpOverload:  # a user op (retrograd.library) replays itself
        return func._replay(args, outputs)  # type: ignore[attr-defined]
    outs = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
    if not func._op.inplace_idx and any(hasattr(type(o), "__torch_dispatch__") for o in outs):
        from retrograd._ops.subclass import with_history  # NOTE [Wrapper subclasses]

        return with_history(func, args, outputs)

    import numpy as np

    from retrograd._ops.registry import run_eager

    arrays = [t._data for t in outputs] if isinstance(outputs, (list, tuple)) else outputs._data
    stand_in = copy.copy(func._op)
    if stand_in.inplace_idx:
        idx = stand_in.inplace_idx[0]

        def forward(*call):
            np.copyto(call[idx], arrays)  # a no-op when the argument is the cached alias
    else:
        def forward(*call):
            return arrays
    stand_in.forward = forward
    return run_eager(stand_in, args)


class OpOverload:
    """What a mode receives as `func`: callable, with the op's schema and name."""

    __slots__ = ("_op",)

    def __init__(self, op) -> None:
        self._op = op

    @property
    def _schema(self):
        return self._op.schema

    @property
    def __name__(self) -> str:
        return str(self)[len("aten."):]

    def name(self) -> str:
        return self._op.name

    def __call__(self, *args, **kwargs):
        run = _registry.run
        schema_args = self._op.schema.args
        if kwargs or len(args) < len(schema_args):
            # arguments after the positional ones by name, else their defaults (graphs record
            # calls with the trailing defaults left out)
            full = list(args)
            for a in schema_args[len(args):]:
                if a.name in kwargs:
                    full.append(kwargs[a.name])
                elif a.has_default or a.type.endswith("?"):
                    full.append(a.default)
                else:
                    from retrograd._errors import OP_MISSING_ARGUMENT

                    schema = self._op.schema
                    raise RuntimeError(OP_MISSING_ARGUMENT.format(schema.name, a.name, schema))
            args = tuple(full)
        return run(self._op, tuple(args))

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        from retrograd import ops

        return getattr(ops.aten, self._op.schema.name)

    def __str__(self) -> str:
        base, _, overload = self._op.name.partition(".")
        return f"aten.{base}.{overload or 'default'}"

    def __repr__(self) -> str:
        base, _, overload = self._op.name.partition(".")
        return f"<OpOverload(op='aten.{base}', overload='{overload or 'default'}')>"

    def __eq__(self, other) -> bool:
        return isinstance(other, OpOverload) and other._op is self._op

    def __reduce__(self):
        # pickled by name: graphs that call ops can be saved
        return (_overload_named, (self._op.name,))

    def __hash__(self) -> int:
        return hash(self._op.name)


def _overload_named(name: str) -> OpOverload:
    from retrograd._ops.overloads import COMPOSITES
    from retrograd._ops.registry import OPS

    if name not in OPS:
        return CompositeOverload(COMPOSITES[name])
    return overload_of(OPS[name])


class CompositeOverload(OpOverload):
    """`ops.aten.conv2d.padding`: a composite overload (NOTE [Overloads]), which runs the ops
    it is made of, as torch's CompositeImplicit overloads do."""

    __slots__ = ("_fn",)

    def __init__(self, fn) -> None:
        super().__init__(fn.opdef)
        self._fn = fn

    def __call__(self, *args, **kwargs):
        schema_args = self._op.schema.args
        positional = list(args)
        keywords = {}
        for a in schema_args[len(args):]:  # the rest by name, keyword-only ones by keyword
            if a.name in kwargs:
                value = kwargs[a.name]
            elif a.has_default or a.type.endswith("?"):
                continue
            else:
                from retrograd._errors import OP_MISSING_ARGUMENT

                schema = self._op.schema
                raise RuntimeError(OP_MISSING_ARGUMENT.format(schema.name, a.name, schema))
            if a.kwarg_only:
                keywords[a.name] = value
            else:
                positional.append(value)
        return self._fn(*positional, **keywords)


class OpOverloadPacket:
    """`ops.aten.mul`: the overloads of one op name, as attributes (`.Tensor`, `.default`)."""

    def __init__(self, name: str, overloads: dict) -> None:
        self._name = name
        self.__name__ = name
        self._qualified_op_name = f"aten::{name}"
        self._overloads = overloads

    def __getattr__(self, overload: str) -> OpOverload:
        try:
            return self._overloads[overload]
        except KeyError:
            raise AttributeError(f"The underlying op of 'aten.{self._name}' has no overload name "
                                 f"'{overload}'") from None

    def overloads(self) -> list:
        return list(self._overloads)

    def __call__(self, *args, **kwargs):
        return next(iter(self._overloads.values()))(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='aten.{self._name}')>"

    def __str__(self) -> str:
        return f"aten.{self._name}"


# aten overloads run as Tensor methods, not declared ops (detach, sym_size, ...; filled by
# retrograd._ops.subclass): modes never see them, wrapper subclasses do
method_overloads: dict = {}


class _OpNamespace:
    """`retrograd.ops.aten`: every declared op by its schema name (built on first use)."""

    def __init__(self) -> None:
        self._packets: dict | None = None

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._packets is None:
            from retrograd._ops.registry import OPS

            grouped: dict = {}
            for full, op in OPS.items():
                base, _, overload = full.partition(".")
                grouped.setdefault(base, {})[overload or "default"] = overload_of(op)
            from retrograd._ops.overloads import COMPOSITES

            for full, fn in COMPOSITES.items():
                if full not in OPS:
                    base, _, overload = full.partition(".")
                    grouped.setdefault(base, {})[overload or "default"] = CompositeOverload(fn)
            for k, v in method_overloads.items():
                grouped.setdefault(k, {}).update(v)
            self._packets = {k: OpOverloadPacket(k, v) for k, v in grouped.items()}
        try:
            return self._packets[name]
        except KeyError:
            raise AttributeError(
                f"'_OpNamespace' 'aten' object has no attribute '{name}'") from None


class UserNamespace:
    """`ops.<ns>` for a namespace other than aten: the user-defined ops in it (filled by
    retrograd.library). As in torch, any name is a namespace, empty until ops are defined."""

    def __init__(self, ns: str) -> None:
        self.ns = ns
        self.packets: dict = {}

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self.packets[name]
        except KeyError:
            raise AttributeError(
                f"'_OpNamespace' '{self.ns}' object has no attribute '{name}'") from None


# namespace -> its UserNamespace (retrograd.library fills it; `ops.<namespace>` reads it)
user_namespaces: dict = {}

