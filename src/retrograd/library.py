"""retrograd.library: user-defined ops, callable as `retrograd.ops.<namespace>.<name>`.

As torch.library: `Library(ns, "DEF" | "FRAGMENT")` with `define(schema)` and
`impl(name, fn, dispatch_key)`, the module-level `define`/`impl`, `custom_op` (schema inferred
from type hints) and `register_autograd`. A user op is an OpOverload like the built-in ones:
dispatch modes see it (selective checkpointing can save it), unless its only kernel is
CompositeImplicitAutograd, which runs in place of the op (modes then see the ops it is made of).

Dispatch keys: "CompositeImplicitAutograd" (the kernel is the op, differentiated through its own
ops), "CPU" / "CompositeExplicitAutograd" (the kernel behind autograd), "Autograd" (a kernel
that does its own autograd, such as a custom Function's apply). A backend kernel with an autograd
formula (register_autograd) runs with grad mode off inside an autograd Function whose backward
is the formula; a custom_op without one gets a node that refuses backward, as torch's; a Library
kernel without one is differentiated through the ops it runs (torch's deprecated fallthrough).
"""

from __future__ import annotations

import contextlib
import inspect
import typing
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from retrograd._ops import dispatch
from retrograd._ops.dispatch import OpOverload, UserNamespace
from retrograd._ops.schema import Schema, parse_schema
from retrograd._tensor import Tensor

__all__ = ["Library", "define", "impl", "custom_op", "register_autograd", "register_fake",
           "infer_schema", "CustomOpDef"]

NO_AUTOGRAD = ("Trying to backward through {} but no autograd formula was registered. Please "
               "use register_autograd to add one.")
_BACKEND_KEYS = ("CPU", "CompositeExplicitAutograd")


class UserOpOverload(OpOverload):
    """`retrograd.ops.<ns>.<name>.default`: one user op, what dispatch modes receive as func."""

    is_view = False
    inplace_idx: tuple = ()

    def __init__(self, ns: str, name: str, schema_text: str) -> None:
        self.ns = ns
        self.op_name = name
        self.schema_text = schema_text
        self.schema = parse_schema(f"{name}{schema_text}")
        self.multi = len(self.schema.returns) > 1
        self.kernels: dict = {}
        self.backward_fn: Callable | None = None
        self.setup_context: Callable | None = None
        self.refuse_backward = False  # custom_op: no formula means backward is an error
        self._op = self  # what selective checkpointing reads (is_view, inplace_idx, multi)

    # --- identity, as torch's OpOverload --------------------------------------------------------
    @property
    def _schema(self) -> Schema:
        return self.schema

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return id(self)

    def name(self) -> str:
        return f"{self.ns}::{self.op_name}"

    @property
    def __name__(self) -> str:
        return f"{self.op_name}.default"

    @property
    def overloadpacket(self) -> Any:  # type: ignore[override]  # a UserOpPacket
        return _namespaces[self.ns].packets[self.op_name]

    def __str__(self) -> str:
        return f"{self.ns}.{self.op_name}.default"

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self.ns}.{self.op_name}', overload='default')>"

    # --- calling ----------------------------------------------------------------------------
    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs:
            return args
        full = list(args)
        for a in self.schema.args[len(args):]:
            full.append(kwargs[a.name] if a.name in kwargs else a.default)
        return tuple(full)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = self._positional(args, kwargs)
        composite = self.kernels.get("CompositeImplicitAutograd")
        if composite is not None and not self._has_backend():
            return composite(*args)
        if "Autograd" in self.kernels:
            return self.kernels["Autograd"](*args)
        if dispatch.mode_stack:
            mode = dispatch.mode_stack.pop()
            try:
                return mode.__torch_dispatch__(self, (), args, {})
            finally:
                dispatch.mode_stack.append(mode)
        return self._run(args, None)

    def _has_backend(self) -> bool:
        return any(k in self.kernels for k in _BACKEND_KEYS)

    def _backend(self) -> Callable:
        for key in _BACKEND_KEYS + ("CompositeImplicitAutograd",):
            fn = self.kernels.get(key)
            if fn is not None:
                return fn
        raise NotImplementedError(
            f"Could not run '{self.name()}' with arguments from the 'CPU' backend: no kernel "
            "registered")

    def _run(self, args: tuple, outputs: Any) -> Any:
        """The op below the modes; `outputs`, when given, stand in for the kernel's (a replay
        of a cached call: the node is built, the kernel does not run)."""
        from retrograd._autograd.state import state

        needs_node = state.grad_enabled and _any_requires_grad(args) and (
            self.backward_fn is not None or self.refuse_backward)
        if needs_node:
            from retrograd.autograd.function import Function

            return _function_class(Function).apply(self, outputs, *args)
        if outputs is not None:
            return outputs
        return self._backend()(*args)

    def _replay(self, args: tuple, outputs: Any) -> Any:
        return self._run(args, outputs)


def _any_requires_grad(args: tuple) -> bool:
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) and t._requires_grad
                                                for t in a):
            return True
    return False


_FUNCTION: list = []


def _function_class(Function: Any) -> Any:
    """The one autograd Function user ops with a formula run in (made on first use)."""
    if _FUNCTION:
        return _FUNCTION[0]

    class UserOpFunction(Function):
        @staticmethod
        def forward(ctx, op, outputs, *args):
            out = op._backend()(*args) if outputs is None else outputs
            ctx._user_op = op
            if op.setup_context is not None:
                op.setup_context(ctx, args, out)
            return out

        @staticmethod
        def backward(ctx, *grads):
            op = ctx._user_op
            if op.backward_fn is None:
                raise RuntimeError(NO_AUTOGRAD.format(op))
            res = op.backward_fn(ctx, *grads)
            if not isinstance(res, tuple):
                res = (res,)
            return (None, None) + tuple(res)

    _FUNCTION.append(UserOpFunction)
    return UserOpFunction


class UserOpPacket:
    """`retrograd.ops.<ns>.<name>`: the op's overloads (user ops have `default` only)."""

    def __init__(self, overload: UserOpOverload) -> None:
        self.default = overload

    def overloads(self) -> list:
        return ["default"]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.default(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self.default.ns}.{self.default.op_name}')>"

    def __str__(self) -> str:
        return f"{self.default.ns}.{self.default.op_name}"


_namespaces: dict = dispatch.user_namespaces  # ns -> UserNamespace, read by retrograd.ops


def _lookup(qualname: str) -> UserOpOverload:
    ns, _, name = qualname.partition("::")
    name = name.split(".")[0]
    space = _namespaces.get(ns)
    if space is None or name not in space.packets:
        raise ValueError(f"Operator '{qualname}' does not exist")
    return space.packets[name].default


class Library:
    """Library(ns, kind): define ops in namespace `ns` ("DEF") or add to it ("FRAGMENT"), and
    register their kernels. `_destroy()` removes what it defined."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in ("DEF", "FRAGMENT", "IMPL"):
            raise ValueError(f"Unsupported kind: {kind}")
        if kind == "DEF" and ns in _namespaces and _namespaces[ns].packets:
            raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the "
                               f"namespace {ns}; please put all of your definitions in a single "
                               "TORCH_LIBRARY block.")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined: list = []
        self._impls: list = []

    def define(self, schema: str, alias_analysis: str = "", *, tags: Sequence = ()) -> str:
        name, paren, rest = schema.partition("(")
        name = name.split("::")[-1].strip()
        if "." in name:
            name = name.split(".")[0]
        space = _namespaces.setdefault(self.ns, UserNamespace(self.ns))
        if name in space.packets:
            raise RuntimeError(f"Tried to register an operator ({self.ns}::{name}{paren}{rest}) "
                               "with the same name and overload name multiple times.")
        space.packets[name] = UserOpPacket(UserOpOverload(self.ns, name, paren + rest))
        self._defined.append(name)
        return name

    def impl(self, op_name: Any, fn: Callable, dispatch_key: str = "",
             *, with_keyset: bool = False) -> None:
        name: str = op_name if isinstance(op_name, str) else op_name.name()
        qual = name if "::" in name else f"{self.ns}::{name}"
        op = _lookup(qual)
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        op.kernels[key] = fn
        self._impls.append((op, key))

    def _destroy(self) -> None:
        for op, key in self._impls:
            op.kernels.pop(key, None)
        space = _namespaces.get(self.ns)
        for name in self._defined:
            if space is not None:
                space.packets.pop(name, None)
        if space is not None and not space.packets:
            _namespaces.pop(self.ns, None)
        self._defined, self._impls = [], []


@contextlib.contextmanager
def _scoped_library(ns: str, kind: str, dispatch_key: str = "") -> Iterator[Library]:
    lib = Library(ns, kind, dispatch_key)
    try:
        yield lib
    finally:
        lib._destroy()


_keep: list = []  # libraries made by define/custom_op without one given: they live forever


def define(qualname: str, schema: str, *, lib: Library | None = None,
           tags: Sequence = ()) -> None:
    ns, _, name = qualname.partition("::")
    if lib is None:
        lib = Library(ns, "FRAGMENT")
        _keep.append(lib)
    lib.define(name + schema)


def impl(qualname: str, types: str | Sequence[str], func: Callable | None = None, *,
         lib: Library | None = None) -> Any:
    """impl(qualname, "cpu"/"CPU"/dispatch key, fn): register a kernel; as a decorator without
    fn."""
    keys = [types] if isinstance(types, str) else list(types)
    keys = ["CPU" if k in ("cpu", "default") else k for k in keys]

    def register(fn: Callable) -> Callable:
        op = _lookup(qualname)
        for key in keys:
            op.kernels[key] = fn
            if lib is not None:
                lib._impls.append((op, key))
        return fn

    return register if func is None else register(func)


# --- custom_op ---------------------------------------------------------------------------------

_SCHEMA_TYPES = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str"}


def _type_name(hint: Any, arg: str) -> str:
    if hint in _SCHEMA_TYPES:
        return _SCHEMA_TYPES[hint]
    origin, params = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)) \
            and len(params) == 2 and type(None) in params:
        inner = params[0] if params[1] is type(None) else params[1]
        return _type_name(inner, arg) + "?"
    if origin in (list, Sequence, typing.Sequence) and len(params) == 1:
        return _type_name(params[0], arg) + "[]"
    raise ValueError(f"infer_schema(func): Parameter {arg} has unsupported type {hint}.")


def infer_schema(fn: Callable, *, mutates_args: str | Sequence[str],
                 op_name: str | None = None) -> str:
    """The schema of `fn` from its type hints: "(Tensor x, SymInt n) -> Tensor"."""
    hints = typing.get_type_hints(fn)
    params = []
    n_mut = 0
    for p in inspect.signature(fn).parameters.values():
        if p.name not in hints:
            raise ValueError(f"infer_schema(func): Parameter {p.name} must have a type "
                             "annotation.")
        t = _type_name(hints[p.name], p.name)
        if mutates_args == "unknown" or p.name in mutates_args:
            n_mut += 1
            t = t.replace("Tensor", f"Tensor(a{n_mut}!)", 1)
        default = "" if p.default is inspect.Parameter.empty else f"={p.default!r}"
        params.append(f"{t} {p.name}{default}")
    ret = hints.get("return")
    if ret is None or ret is type(None):
        out = "()"
    elif typing.get_origin(ret) is tuple:
        out = "(" + ", ".join(_type_name(r, "return") for r in typing.get_args(ret)) + ")"
    else:
        out = _type_name(ret, "return")
    text = f"({', '.join(params)}) -> {out}"
    return f"{op_name}{text}" if op_name else text


class CustomOpDef:
    """What @custom_op returns: calling it calls the op (`_opoverload`)."""

    def __init__(self, qualname: str, fn: Callable, schema: str) -> None:
        ns, _, name = qualname.partition("::")
        self._qualname = qualname
        self._init_fn = fn
        self._lib = Library(ns, "FRAGMENT")
        _keep.append(self._lib)
        self._lib.define(name + schema)
        self._opoverload = _lookup(qualname)
        self._opoverload.kernels["CompositeExplicitAutograd"] = fn
        self._opoverload.refuse_backward = True
        self.__name__ = name
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._opoverload(*args, **kwargs)

    def register_autograd(self, backward: Callable, *,
                          setup_context: Callable | None = None) -> None:
        self._opoverload.backward_fn = backward
        self._opoverload.setup_context = setup_context

    def register_fake(self, fn: Callable) -> Callable:
        self._opoverload.kernels["Meta"] = fn
        return fn

    def register_kernel(self, device_types: str | Sequence[str],
                        fn: Callable | None = None) -> Any:
        def register(f: Callable) -> Callable:
            self._opoverload.kernels["CPU"] = f
            return f

        return register if fn is None else register(fn)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args: str | Sequence[str],
              device_types: str | Sequence[str] | None = None, schema: str | None = None,
              tags: Sequence = ()) -> Any:
    """@custom_op("ns::name", mutates_args=()): make a Python function an op."""
    if isinstance(mutates_args, str) and mutates_args != "unknown":
        raise ValueError("mutates_args must be 'unknown' or an iterable of argument names")

    def make(f: Callable) -> CustomOpDef:
        text = schema if schema is not None else infer_schema(f, mutates_args=mutates_args)
        return CustomOpDef(name, f, text)

    return make if fn is None else make(fn)


def _user_op(op: Any) -> UserOpOverload:
    if isinstance(op, CustomOpDef):
        return op._opoverload
    if isinstance(op, UserOpOverload):
        return op
    if isinstance(op, UserOpPacket):
        return op.default
    return _lookup(op)


def register_autograd(op: Any, backward: Callable, /, *, setup_context: Callable | None = None,
                      lib: Library | None = None) -> None:
    """The op's backward(ctx, *grads) -> input grads, with setup_context(ctx, inputs, output)
    run after its forward to save what backward needs."""
    user_op = _user_op(op)
    user_op.backward_fn = backward
    user_op.setup_context = setup_context


def register_fake(op: Any, func: Callable | None = None, /, *, lib: Library | None = None,
                  _stacklevel: int = 1) -> Any:
    """Recorded only: retrograd has no fake tensors to run it on."""
    def register(f: Callable) -> Callable:
        _user_op(op).kernels["Meta"] = f
        return f

    return register if func is None else register(func)
