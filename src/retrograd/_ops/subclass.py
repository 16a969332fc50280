"""Wrapper tensor subclasses: Tensor._make_wrapper_subclass and __torch_dispatch__.

NOTE [Wrapper subclasses]
A wrapper subclass instance (made by Tensor._make_wrapper_subclass in the subclass's __new__)
has a shape, strides, dtype and requires_grad but no data of its own: its array is zeros, read
only, and stands only for the geometry. Every op that receives one is handed to the class's
`__torch_dispatch__(func, types, args, kwargs)`, which computes with whatever the instance
wraps, as in torch:
- dispatch modes see the op first (the subclass dispatcher is the bottom mode of the stack,
  installed when the first wrapper is made, so programs without wrappers never pay for it;
  while it is the only mode, an op whose arguments include no Tensor subclass skips it: the
  generated op entries test for that, and dispatch() hands the dispatcher the op directly);
- autograd works on the wrappers: the op's node is built on the wrapper inputs and outputs and
  saves the wrappers themselves, while __torch_dispatch__ runs with grad mode off (torch runs
  it below autograd), so the tensors it computes with record no graph;
- detach() of a wrapper dispatches aten.detach to the subclass, so the tensors autograd and
  checkpointing keep are wrappers too.
In-place ops on a wrapper that needs a gradient are not supported (NotImplementedError).
A class may define `__lift_args__(args)`, called before a node is built, to replace plain
inputs that require grad by wrappers (a batched value broadcasts an unbatched one: its gradient
is summed back over the batch, NOTE [Batched tensors]).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd._autograd import saved as _saved
from retrograd._autograd import views as _views
from retrograd._autograd.state import state
from retrograd._ops import dispatch
from retrograd._ops import registry as _registry  # (a module object: registry imports this one)
from retrograd._tensor import Tensor, VersionCounter, _is_wrapper

WRAPPER_INPLACE_GRAD = (
    "in-place op {} on a wrapper tensor subclass that requires grad is not supported")


def is_wrapper(t: Any) -> bool:
    """A Tensor whose class dispatches its ops (defines __torch_dispatch__)."""
    return isinstance(t, Tensor) and _is_wrapper(t)


def make_wrapper_subclass(cls: type, size, strides=None, storage_offset=None,
                          memory_format=None, dtype=None, layout=None, device=None,
                          pin_memory: bool = False, requires_grad: bool = False,
                          dispatch_sizes_strides_policy=None, dispatch_device: bool = False,
                          dispatch_layout: bool = False, _extra_dispatch_keys=None,
                          storage_size=None) -> Any:
    """An instance of `cls` with the given geometry and no data (NOTE [Wrapper subclasses])."""
    if device is not None:
        from retrograd._device import device as check_device

        check_device(device)  # only the CPU exists
    shape = tuple(int(n) for n in size)
    np_dtype = (dtype or D.get_default_dtype()).np
    if strides is None:
        strides, step = [], 1
        for n in reversed(shape):
            strides.insert(0, step)
            step *= max(n, 1)
    strides = tuple(int(s) for s in strides)
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 1
    item = np_dtype.itemsize
    arr = np.lib.stride_tricks.as_strided(np.zeros(extent, np_dtype), shape,
                                          tuple(s * item for s in strides), writeable=False)
    t: Any = object.__new__(cls)
    t._data = arr
    t._requires_grad = bool(requires_grad)
    t._grad_fn = None
    t._output_nr = 0
    t._grad = None
    vc = t._version_counter = object.__new__(VersionCounter)
    vc.version = 0
    t._view = None
    t._grad_acc = None
    t._meta = None
    _track(t)
    return t


class _SubclassDispatch:
    """The bottom dispatch mode (NOTE [Wrapper subclasses])."""

    _internal = True  # not shown by _get_current_dispatch_mode

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        cls = _wrapper_class(args, kwargs)
        if cls is None:
            if not kwargs and func.__class__ is dispatch.OpOverload:
                # the bottom mode: nothing else to see it
                return _registry.run_eager(func._op, args)
            return func(*args, **kwargs)
        return _to_class(cls, func, args, kwargs)


def _to_class(cls: type, func, args: tuple, kwargs: dict) -> Any:
    """func on args, some of them instances of the wrapper class cls: autograd here, the
    values by cls.__torch_dispatch__ below it."""
    if func.__class__ is not dispatch.OpOverload:  # a user op: no autograd of ours here
        return _below_autograd(cls, func, args, kwargs)
    op = func._op
    build = state.grad_enabled and op.node_cls is not None and _any_requires_grad(args)
    if op.inplace_idx:
        if build:
            return _inplace_with_history(cls, func, args, kwargs)
        out = _below_autograd(cls, func, args, kwargs)
        from retrograd._ops.inplace import bump_version

        for i in op.inplace_idx:
            if isinstance(args[i], Tensor):
                bump_version(args[i], op.name, depth=2)
        return out
    if build:
        lift = getattr(cls, "__lift_args__", None)
        if lift is not None:  # the class may first make its other inputs wrappers too
            with _Unhidden():
                args = lift(args)
    return with_history(func, args, _below_autograd(cls, func, args, kwargs), build)


def _inplace_with_history(cls: type, func, args: tuple, kwargs: dict) -> Any:
    """An in-place op on a wrapper that records history (a ReLU(inplace=True) inside
    vmap(grad(f))), as the plain path does it (_ops.inplace.run_inplace): the class writes
    self's values, then the op's node becomes self's history, reading a copy of self's old
    value where its formulas read self. A view or a Tensor[] write has no such path yet."""
    from retrograd._autograd.copy_slices import rebase_history
    from retrograd._ops import inplace

    op = func._op
    idx = op.inplace_idx[0]
    self_t = args[idx]
    info = self_t._view if isinstance(self_t, Tensor) else None
    if op.written_lists or not isinstance(self_t, Tensor) or (
            info is not None and not info.replay):
        raise NotImplementedError(WRAPPER_INPLACE_GRAD.format(func))
    inplace.check_inplace(self_t, True)
    saved_args = args
    if inplace.reads_self(op):
        clone = dispatch.overload_of(_registry.OPS["clone"])
        snap = _below_autograd(cls, clone, (self_t,), {})
        inplace.as_old_self(snap, self_t)
        saved_args = args[:idx] + (snap,) + args[idx + 1:]
    before = self_t._version_counter.version
    out = _below_autograd(cls, func, args, kwargs)
    inplace.bump_version(self_t, op.schema.name, depth=3)
    if info is None:
        rebase_history(op, self_t, saved_args, idx)
        inplace.record_pre_write_versions(self_t, before)
        _keep_wrappers_saved(op, (self_t,))  # self's new value, at its new version
        return out
    # a view: CopySlices on the base wraps the op's node, whose output is an alias of the
    # view made by the class (the view's values), kept as itself
    alias = dispatch.overload_of(_registry.OPS["alias"])
    holder = _below_autograd(cls, alias, (self_t,), {})
    rebase_history(op, self_t, saved_args, idx, holder)
    copy_slices = info.base._grad_fn
    copy_slices.metadata["wrapper_write"] = True
    inplace.record_pre_write_versions(self_t, before)
    _keep_wrappers_saved(op, (holder,), node=copy_slices.fn)
    return out


def with_history(func, args: tuple, out: Any, build: bool | None = None) -> Any:
    """Give the outputs of func(*args), computed by a subclass (or cached), their autograd
    history: views of their base, and the op's node saving wrappers as themselves."""
    op = func._op
    if build is None:
        build = state.grad_enabled and op.node_cls is not None and _any_requires_grad(args)
    if op.multi:
        outs = tuple(out)
        if not all(isinstance(o, Tensor) for o in outs):
            return out
    elif isinstance(out, Tensor):
        outs = (out,)
    else:
        return out
    if op.is_view:
        _views.make_views(op, args, outs, build)
    if build:
        _registry._build_node(op, args, outs)
        _keep_wrappers_saved(op, outs)
    return out


def _below_autograd(cls: type, func, args: tuple, kwargs: dict) -> Any:
    prev = state.grad_enabled
    state.grad_enabled = False
    # what overrides.enable_reentrant_dispatch restores inside the handler
    outer, state.dispatch_outer_grad = state.dispatch_outer_grad, prev
    local = dispatch._local
    # _Unhidden's work, inline: this runs for every op on a wrapper
    unhide = local.shared_hidden > 0 and getattr(cls, "_wraps_wrappers", False)
    if unhide:
        local.shared_hidden -= 1
    try:
        return cls.__torch_dispatch__(func, (cls,), args, kwargs)  # type: ignore[attr-defined]
    finally:
        if unhide:
            local.shared_hidden += 1
        state.dispatch_outer_grad = outer
        state.grad_enabled = prev


class _Unhidden:
    """A class that says it may wrap wrappers (`_wraps_wrappers`: a batched value of a batched
    value) computes with them: its ops must reach the dispatcher, which dispatch hides while it
    runs. Other classes (LoggingTensor-style ones) compute on plain tensors with it hidden."""

    __slots__ = ("unhide",)

    def __enter__(self) -> None:
        local = dispatch._local
        self.unhide = local.shared_hidden > 0
        if self.unhide:
            local.shared_hidden -= 1

    def __exit__(self, *exc: Any) -> None:
        if self.unhide:
            dispatch._local.shared_hidden += 1


def _wrapper_class(args: tuple, kwargs: dict) -> type | None:
    cls = _first_wrapper_class(args)
    if cls is None and kwargs:
        cls = _first_wrapper_class(kwargs.values())
    return cls


def _first_wrapper_class(values: Any) -> type | None:
    for a in values:
        c = a.__class__
        if c is Tensor:  # the common case first: a plain tensor is never a wrapper
            continue
        if isinstance(a, Tensor):
            if _is_wrapper(a):
                return c
        elif isinstance(a, (list, tuple)):
            for t in a:
                if t.__class__ is not Tensor and isinstance(t, Tensor) and _is_wrapper(t):
                    return t.__class__
    return None


def _dispatch_alone(op, args: tuple) -> Any:
    """dispatch() while this dispatcher is the only mode (NOTE [Wrapper subclasses]): an op
    with no wrapper argument runs as if no mode were there, without the mode-stack walk."""
    cls = _first_wrapper_class(args)
    if cls is None:
        return _registry.run_eager(op, args)
    if not op.inplace_idx and getattr(cls, "_wraps_wrappers", False):
        # its ops must reach this dispatcher again (_Unhidden), so hiding it would be undone
        # at once (the hidden count is 0 here: dispatch() comes here only then). Not for an
        # in-place op: rebasing its history reads the wrappers' geometry with it hidden.
        return _to_class(cls, dispatch.overload_of(op), args, {})
    local = dispatch._local
    local.shared_hidden += 1
    try:
        return _to_class(cls, dispatch.overload_of(op), args, {})
    finally:
        local.shared_hidden -= 1


def _any_requires_grad(args: tuple) -> bool:
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                return True
        elif isinstance(a, (list, tuple)):
            if any(isinstance(t, Tensor) and t._requires_grad for t in a):
                return True
    return False


def _keep_wrappers_saved(op, outs: tuple, keep=is_wrapper, node=None) -> None:
    """A node saves its outputs as their arrays (NOTE [Saving without cycles]); a wrapper's
    array holds no values, so the node keeps the wrapper output itself (and forward-mode AD
    keeps an output that carries a tangent, which a tensor rebuilt from the array would
    lose)."""
    SavedVariable = _saved.SavedVariable
    if node is None:  # `node`: given for a view written in place (CopySlices wraps it)
        node = next((o._grad_fn for o in outs if o._grad_fn is not None), None)
    if node is None or not node._plan.outputs_saved:
        return
    saved = list(node._saved)
    for j, i in node._plan.outputs_saved:
        sv = saved[j]
        if (sv.__class__ is SavedVariable and not sv._original
                and sv._hooks is None and keep(outs[i])):
            kept = SavedVariable(outs[i], False)
            kept._output_nr = outs[i]._output_nr
            saved[j] = kept
    node._saved = tuple(saved)


_DISPATCHER = _SubclassDispatch()
dispatch.subclass_alone[:] = [_DISPATCHER, _dispatch_alone]


_live = [0]  # wrapper instances alive


def _track(t: Tensor) -> None:
    """Count a new wrapper; the dispatcher is on the mode stack while any is alive, so ops pay
    nothing for it once the last wrapper is gone. (A class with `_counts_itself` calls
    counted() when it makes one and _released() from its own __del__, which costs less than a
    finalizer.)"""
    counted()
    if not getattr(t, "_counts_itself", False):
        weakref.finalize(t, _released)


def counted() -> None:
    """One more wrapper alive (_track)."""
    if _live[0] == 0 and _DISPATCHER not in dispatch.mode_stack:
        dispatch.mode_stack.insert(0, _DISPATCHER)
    _live[0] += 1


def _released() -> None:
    _live[0] -= 1
    # (were the last wrapper to die while the dispatcher itself runs, it stays until the next
    # wrapper made is released)
    if _live[0] == 0 and _DISPATCHER in dispatch.mode_stack:
        dispatch.mode_stack.remove(_DISPATCHER)


# --- detach ------------------------------------------------------------------------------------


class MethodOverload(dispatch.OpOverload):
    """An aten overload that retrograd runs as a Tensor method rather than as a declared op
    (detach, the metadata queries): what a wrapper subclass's __torch_dispatch__ receives for
    them, and `ops.aten.<name>.<overload>`."""

    __slots__ = ("_text", "_fn")

    def __init__(self, text: str, fn: Any) -> None:
        self._text = text
        self._fn = fn

    @property
    def _schema(self):
        from retrograd._ops.schema import parse_schema

        return parse_schema(self._text)

    def name(self) -> str:
        return "aten::" + self._text.split("(")[0]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __str__(self) -> str:
        base, _, overload = self._text.split("(")[0].partition(".")
        return f"aten.{base}.{overload or 'default'}"

    def __repr__(self) -> str:
        base, _, overload = self._text.split("(")[0].partition(".")
        return f"<OpOverload(op='aten.{base}', overload='{overload or 'default'}')>"

    def __eq__(self, other) -> bool:
        return other is self

    def __hash__(self) -> int:
        return id(self)


def _ones_like(t: Tensor) -> Tensor:
    from retrograd._ops.creation import ones_like

    return ones_like(t)


def _zeros_like(t: Tensor) -> Tensor:
    from retrograd._ops.creation import zeros_like

    return zeros_like(t)


detach_overload = MethodOverload("detach(Tensor(a) self) -> Tensor(a)", Tensor.detach)
ones_like_overload = MethodOverload(
    "ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor", _ones_like)
zeros_like_overload = MethodOverload(
    "zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor", _zeros_like)
local_scalar_dense_overload = MethodOverload("_local_scalar_dense(Tensor self) -> Scalar",
                                             Tensor.item)
METHOD_OVERLOADS = {
    "detach": {"default": detach_overload},
    "_local_scalar_dense": {"default": local_scalar_dense_overload},
    "ones_like": {"default": ones_like_overload},
    "zeros_like": {"default": zeros_like_overload},
    "sym_size": {"default": MethodOverload("sym_size(Tensor self) -> SymInt[]",
                                           lambda t: list(t.shape)),
                 "int": MethodOverload("sym_size.int(Tensor self, int dim) -> SymInt",
                                       lambda t, d: t.size(d))},
    "sym_stride": {"default": MethodOverload("sym_stride(Tensor self) -> SymInt[]",
                                             lambda t: list(t.stride())),
                   "int": MethodOverload("sym_stride.int(Tensor self, int dim) -> SymInt",
                                         lambda t, d: t.stride(d))},
    "sym_numel": {"default": MethodOverload("sym_numel(Tensor self) -> SymInt",
                                            lambda t: t.numel())},
    "sym_storage_offset": {"default": MethodOverload(
        "sym_storage_offset(Tensor self) -> SymInt", lambda t: t.storage_offset())},
}
dispatch.method_overloads.update(METHOD_OVERLOADS)


def detach_wrapper(t: Tensor) -> Tensor:
    """detach() of a wrapper: the subclass computes it; the result shares t's version counter
    and has no history."""
    out = _below_autograd(type(t), detach_overload, (t,), {})
    if isinstance(out, Tensor):
        out._grad_fn = None
        out._requires_grad = False
        out._version_counter = t._version_counter
    return out


def item_wrapper(t: Tensor) -> Any:
    """item() of a wrapper: its class reads the value (its own array holds none)."""
    return _below_autograd(type(t), local_scalar_dense_overload, (t,), {})


def ones_like_wrapper(t: Tensor) -> Tensor:
    """backward()'s implicit gradient for a wrapper output: ones, made by its class."""
    return _below_autograd(type(t), ones_like_overload, (t,), {})


def zeros_like_wrapper(t: Tensor) -> Tensor:
    """Zeros like a wrapper, made by its class (a batched value's zeros are batched too)."""
    return _below_autograd(type(t), zeros_like_overload, (t,), {})


def _instance_over(cls: type, data: np.ndarray, version_counter: Any, meta: Any) -> Any:
    """A new instance of `cls` (a Tensor subclass) over `data`, with no history."""
    out: Any = object.__new__(cls)
    out._data = data
    out._requires_grad = False
    out._grad_fn = None
    out._output_nr = 0
    out._grad = None
    out._version_counter = version_counter
    out._view = None
    out._grad_acc = None
    out._meta = meta
    return out


def shallow_copy(t: Tensor) -> Tensor:
    """A new instance of t's class over the same array and attributes, with no history."""
    out = _instance_over(type(t), t._data, t._version_counter, None)
    if hasattr(t, "__dict__"):
        out.__dict__.update(t.__dict__)
    _track(out)
    return out


def _make_wrapper_subclass(cls: type, *args: Any, **kwargs: Any) -> Any:
    return make_wrapper_subclass(cls, *args, **kwargs)


Tensor._make_wrapper_subclass = staticmethod(_make_wrapper_subclass)  # type: ignore[attr-defined]


def make_subclass(cls: type, data: Tensor, require_grad: bool = False,
                  dispatch_sizes_strides_policy: Any = None, dispatch_device: bool = False,
                  dispatch_layout: bool = False, _extra_dispatch_keys: Any = None,
                  storage_size: Any = None) -> Any:
    """Tensor._make_subclass: an instance of `cls` over `data`'s memory and version counter,
    with no history (as data.detach()). Unlike a wrapper it holds real values; if its class
    defines __torch_dispatch__, its ops still go there."""
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not "
                        f"{type(data).__name__}")
    plain = data.detach()
    # plain._meta: the storage of a detached view (Tensor.detach)
    t = _instance_over(cls, plain._data, plain._version_counter, plain._meta)
    if _is_wrapper(t):
        _track(t)
    if require_grad:
        t.requires_grad_(True)
    return t


Tensor._make_subclass = staticmethod(make_subclass)  # type: ignore[attr-defined]
