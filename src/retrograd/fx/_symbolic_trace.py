"""symbolic_trace, Tracer and wrap: record a function or Module by running it on Proxies.

NOTE [Symbolic tracing]
The program runs once with a Proxy for each input. Operators and Tensor methods on a Proxy
record themselves (retrograd.fx.proxy). Calls that do not go through the Proxy are patched
for the duration of the trace only: the public functions of retrograd, retrograd.nn.functional,
retrograd.linalg, ... (they record a call_function when an argument holds a Proxy and run as
usual otherwise), nn.Module.__call__ (a leaf module, one of retrograd.nn's own, is recorded as
call_module; any other runs its forward), Module.__getattr__ (parameters and buffers become
get_attr nodes), and each name given to `wrap`. Everything is restored when tracing ends.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import inspect
import types
from collections.abc import Callable
from typing import Any

from retrograd._ops.dispatch import OpOverload
from retrograd._tensor import Tensor
from retrograd.fx._qualname import PUBLIC_MODULES, public_name_table
from retrograd.fx.graph import Graph
from retrograd.fx.graph_module import GraphModule
from retrograd.fx.node import Node
from retrograd.fx.proxy import Proxy
from retrograd.nn.modules.container import Sequential
from retrograd.nn.modules.module import Module

# (id(globals dict), name) -> globals dict: the functions wrap() keeps whole
_wrapped: dict = {}
_public_wrappers: list | None = None  # [(module, name, wrapper)], made once


def wrap(fn_or_name: Callable | str) -> Callable | str:
    """Keep a function whole when tracing: calls to it, made from the module where wrap is
    called, become one call_function node (with `meta["is_wrapped"] = True`) instead of being
    traced through. Call at module level, with the function or its name (also for builtins,
    as in `wrap("len")`); usable as a decorator.

    >>> # at the top of a module:
    >>> # @retrograd.fx.wrap
    >>> # def clamp_norm(x, limit): ...
    """
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    _wrapped[(id(caller.f_globals), name)] = caller.f_globals
    return fn_or_name


def _find_tracer(args: Any, kwargs: dict) -> Any:
    found: list = []

    def visit(a: Any) -> None:
        if found:
            return
        if isinstance(a, Proxy):
            found.append(a.tracer)
        elif isinstance(a, (tuple, list)):
            for x in a:
                visit(x)
        elif isinstance(a, dict):
            for x in a.values():
                visit(x)

    visit(args)
    visit(kwargs)
    return found[0] if found else None


def _recording(fn: Callable, wrapped_by_user: bool = False) -> Callable:
    """`fn`, recording a call_function node when an argument holds a Proxy."""
    @functools.wraps(fn)
    def recorder(*args: Any, **kwargs: Any) -> Any:
        tracer = _find_tracer(args, kwargs)
        if tracer is None:
            return fn(*args, **kwargs)
        proxy = tracer.create_proxy("call_function", fn, args, kwargs)
        if wrapped_by_user:
            proxy.node.meta["is_wrapped"] = True
        return proxy

    recorder.__fx_records__ = fn  # type: ignore[attr-defined]
    return recorder


def _public_function_wrappers() -> list:
    global _public_wrappers
    if _public_wrappers is None:
        out = []
        for mod_name in PUBLIC_MODULES:
            try:
                mod = importlib.import_module(mod_name)
            except ImportError:
                continue
            for name, value in list(vars(mod).items()):
                if not name.startswith("_") and isinstance(
                        value, (types.FunctionType, types.BuiltinFunctionType)):
                    out.append((mod, name, _recording(value)))
        _public_wrappers = out
    return _public_wrappers


_TENSOR_OPERATORS = tuple(f"__{p}{n}__" for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift") for p in ("", "r")) + tuple(
    f"__{n}__" for n in ("eq", "ne", "lt", "le", "gt", "ge"))


def _deferring(method: Callable) -> Callable:
    @functools.wraps(method)
    def operator(self: Tensor, other: Any) -> Any:
        if isinstance(other, Proxy):
            return NotImplemented
        return method(self, other)

    return operator


def _recording_method(method: Callable) -> Callable:
    """`method` of a callable object, recording a call of the object on Proxies."""
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        tracer = _find_tracer(args, kwargs)
        if tracer is None:
            return method(self, *args, **kwargs)
        return tracer.create_proxy("call_function", self, args, kwargs)

    return call


class Tracer:
    """Records a program into a Graph by running it on Proxies (NOTE [Symbolic tracing]).
    Subclass and override is_leaf_module, call_module, create_arg, ... to change what is
    recorded."""

    def __init__(self, autowrap_modules: tuple = (), autowrap_functions: tuple = (),
                 param_shapes_constant: bool = False) -> None:
        self.graph = Graph()
        self.root: Module = Module()
        self._autowrap_functions = tuple(autowrap_functions)
        self._reset()

    def _reset(self) -> None:
        self._module_paths: dict = {}
        self._tensor_paths: dict = {}  # id(tensor) -> its attribute path on the root
        self._attr_nodes: dict = {}  # attribute path -> its get_attr node
        self._held: list = []  # constants (kept alive so their ids stay theirs)
        self._constants = 0

    # --- what becomes a node ------------------------------------------------------------------
    def create_node(self, kind: str, target: Any, args: tuple, kwargs: dict,
                    name: str | None = None, type_expr: Any = None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Any, args: tuple, kwargs: dict,
                     name: str | None = None, type_expr: Any = None,
                     proxy_factory_fn: Callable | None = None) -> Proxy:
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs),
                                name, type_expr)
        return proxy_factory_fn(node) if proxy_factory_fn is not None else self.proxy(node)

    def create_arg(self, a: Any) -> Any:
        """A value as a node argument: Proxies become their nodes, the root's tensors get_attr
        nodes, other tensors constants (`_tensor_constant<i>` attributes of the root)."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, tuple):
            items = [self.create_arg(x) for x in a]
            return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
        if isinstance(a, list):
            return [self.create_arg(x) for x in a]
        if isinstance(a, dict):
            return {k: self.create_arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, Tensor):
            return self._attr_node(a)
        return a

    def _attr_node(self, t: Tensor) -> Node:
        path = self._tensor_paths.get(id(t))
        if path is None:
            path = f"_tensor_constant{self._constants}"
            self._constants += 1
            setattr(self.root, path, t)
            self._tensor_paths[id(t)] = path
            self._held.append(t)
        node = self._attr_nodes.get(path)
        if node is None:
            node = self._attr_nodes[path] = self.create_node("get_attr", path, (), {})
        return node

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """retrograd.nn's own modules (but Sequential) are recorded whole."""
        return (type(m).__module__.startswith("retrograd.nn")
                and not isinstance(m, Sequential))

    def path_of_module(self, mod: Module) -> str:
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m: Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """A leaf module is one call_module node; any other module is traced through."""
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        """A module attribute read while tracing: the root's tensors are get_attr proxies."""
        if isinstance(attr_val, Tensor):
            path = self._tensor_paths.get(id(attr_val))
            if path is not None:
                proxy = parameter_proxy_cache.get(path)
                if proxy is None:
                    proxy = parameter_proxy_cache[path] = self.proxy(self._attr_node(attr_val))
                return proxy
        return attr_val

    # --- tracing ------------------------------------------------------------------------------
    def trace(self, root: Module | Callable, concrete_args: dict | None = None) -> Graph:
        """Run `root` (a Module's forward, or a function) on Proxies and return its Graph."""
        if isinstance(root, Module):
            self.root = root
            fn: Callable = type(root).forward
            skip_self = True
        else:
            self.root = Module()
            fn = root
            skip_self = False
        self.graph = Graph(tracer_cls=type(self))
        self._reset()
        self._module_paths = {id(m): name for name, m in self.root.named_modules()}
        for name, m in self.root.named_modules():
            prefix = f"{name}." if name else ""
            for attr, value in list(vars(m).items()) + list(m._buffers.items()) \
                    + list(m._parameters.items()):
                if isinstance(value, Tensor):
                    self._tensor_paths.setdefault(id(value), prefix + attr)
        concrete = dict(concrete_args or {})
        args: list = [self.root] if skip_self else []
        params = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0:]
        for p in params:
            if p.name in concrete:
                args.append(concrete[p.name])
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise NotImplementedError("retrograd.fx traces named arguments only; give "
                                          f"'{p.name}' through concrete_args or name them")
            node = self.graph.placeholder(p.name, default_value=p.default)
            args.append(self.proxy(node))
        with _Patches(self, fn):
            result = fn(*args)
        self.create_node("output", "output", (self.create_arg(result),), {})
        return self.graph


class _Patches:
    """The replacements of NOTE [Symbolic tracing], in place while the trace runs."""

    def __init__(self, tracer: Tracer, fn: Callable) -> None:
        self.tracer = tracer
        self.fn = fn
        self.undo: list = []

    def _set(self, owner: Any, name: str, value: Any) -> None:
        if isinstance(owner, dict):
            if name in owner:
                old = owner[name]
                self.undo.append(lambda: owner.__setitem__(name, old))
            else:
                self.undo.append(lambda: owner.pop(name, None))
            owner[name] = value
        else:
            old = owner.__dict__[name]
            self.undo.append(lambda: setattr(owner, name, old))
            setattr(owner, name, value)

    def __enter__(self) -> None:
        try:
            self._patch()
        except BaseException:
            self.__exit__()
            raise

    def _patch(self) -> None:
        tracer = self.tracer
        public_name_table()  # names of the public functions, read before they are replaced
        for mod, name, recorder in _public_function_wrappers():
            self._set(mod, name, recorder)
        for (_, name), globals_dict in _wrapped.items():
            orig = globals_dict.get(name, getattr(builtins, name, None))
            if orig is not None:
                self._set(globals_dict, name, _recording(orig, True))
        fn_globals = getattr(self.fn, "__globals__", None)
        if fn_globals is not None:
            for f in tracer._autowrap_functions:
                if fn_globals.get(f.__name__) is f:
                    self._set(fn_globals, f.__name__, _recording(f, True))
        # calling an op overload on Proxies (retracing make_fx's graphs) records the call
        self._set(OpOverload, "__call__", _recording_method(OpOverload.__call__))
        # a tensor's operator with a Proxy on the other side defers to the Proxy's
        for name in _TENSOR_OPERATORS:
            method = Tensor.__dict__.get(name)
            if method is not None:
                self._set(Tensor, name, _deferring(method))
        # public functions the traced code imported by name (`from retrograd import relu`),
        # as its globals or its closure's cells
        names = public_name_table()
        for name, value in list((fn_globals or {}).items()):
            if callable(value) and id(value) in names:
                self._set(fn_globals, name, _recording(value))
        for cell in getattr(self.fn, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if callable(value) and id(value) in names:
                cell.cell_contents = _recording(value)
                self.undo.append(functools.partial(setattr, cell, "cell_contents", value))
        module_call = Module.__call__
        module_getattr = Module.__getattr__
        cache: dict = {}

        def call(mod: Module, *args: Any, **kwargs: Any) -> Any:
            return tracer.call_module(mod, functools.partial(module_call, mod), args, kwargs)

        def getattr_(mod: Module, name: str) -> Any:
            return tracer.getattr(name, module_getattr(mod, name), cache)

        self._set(Module, "__call__", call)
        self._set(Module, "__getattr__", getattr_)

    def __exit__(self, *exc: Any) -> None:
        undo, self.undo = self.undo, []
        for step in reversed(undo):
            step()


def symbolic_trace(root: Module | Callable, concrete_args: dict | None = None) -> GraphModule:
    """Record `root` (a Module or a function) as a GraphModule by running it on Proxies.

    >>> import retrograd
    >>> class Net(retrograd.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.lin = retrograd.nn.Linear(3, 2)
    ...     def forward(self, x):
    ...         return retrograd.relu(self.lin(x)).sum(dim=1)
    >>> print(symbolic_trace(Net()).graph)
    graph():
        %x : [num_users=1] = placeholder[target=x]
        %lin : [num_users=1] = call_module[target=lin](args = (%x,), kwargs = {})
        %relu : [num_users=1] = call_function[target=retrograd.relu](args = (%lin,), kwargs = {})
        %sum_1 : [num_users=1] = call_method[target=sum](args = (%relu,), kwargs = {dim: 1})
        return sum_1
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else getattr(root, "__name__", "f")
    return GraphModule(tracer.root, graph, name)
