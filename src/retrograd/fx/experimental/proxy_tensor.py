"""make_fx: trace a function to the graph of ops the dispatcher runs (torch's make_fx).

NOTE [Op-level tracing]
make_fx runs the function on real tensors with a dispatch mode pushed
(retrograd.utils._python_dispatch.TorchDispatchMode). Every op the dispatcher runs reaches the
mode as an OpOverload (`retrograd.ops.aten.mul.Tensor`); the mode runs it, then records a
call_function node whose arguments are the nodes of the tensors it was given. A tensor the
mode has not seen before (made by a creation function, or captured from outside) enters the
graph as a constant: an attribute `_tensor_constant<i>` (`_param_constant<i>` for a Parameter)
read with get_attr. Backward is traced the same way: while a mode is active the engine runs
the Tensor derivative formulas (NOTE [Array formulas]) and accumulates gradients with ops, so
`retrograd.autograd.grad` inside the function puts the formulas' ops in the graph. With no
mode active, nothing here runs.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any, NamedTuple

from retrograd._tensor import Tensor, _wrap
from retrograd.fx.graph import Graph
from retrograd.fx.graph_module import GraphModule
from retrograd.fx.node import Node
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter
from retrograd.utils._python_dispatch import TorchDispatchMode


class TensorMetadata(NamedTuple):
    """node.meta["tensor_meta"]: what a pass needs to know of a tensor value."""

    shape: tuple
    dtype: Any
    requires_grad: bool
    stride: tuple


def _tensor_meta(t: Tensor) -> TensorMetadata:
    return TensorMetadata(tuple(t.shape), t.dtype, t.requires_grad, t.stride())


def _set_meta(node: Node, value: Any) -> None:
    if isinstance(value, Tensor):
        # an alias of the value with no autograd history: meta must not keep graphs alive
        node.meta["val"] = _wrap(value._data)
        node.meta["tensor_meta"] = _tensor_meta(value)
    elif isinstance(value, (tuple, list)) and any(isinstance(v, Tensor) for v in value):
        node.meta["val"] = type(value)(_wrap(v._data) if isinstance(v, Tensor) else v
                                       for v in value)
    else:
        node.meta["val"] = value


class _ProxyMode(TorchDispatchMode):
    """Records each op it sees into `graph` (NOTE [Op-level tracing])."""

    def __init__(self, graph: Graph, root: Module, decompositions: dict) -> None:
        self.graph = graph
        self.root = root
        self.decompositions = decompositions
        # id(tensor) -> (tensor, node), and the same by id(tensor's array); the objects are
        # held so ids stay unique
        self.nodes: dict = {}
        self.arrays: dict = {}
        self.counts = {"_tensor_constant": 0, "_param_constant": 0}

    def track(self, t: Tensor, node: Node) -> None:
        self.nodes[id(t)] = (t, node)
        self.arrays[id(t._data)] = (t._data, node)

    def node_of(self, t: Tensor) -> Node:
        entry = self.nodes.get(id(t)) or self.arrays.get(id(t._data))
        if entry is not None:
            # a saved output comes back from backward as a new Tensor around the same array
            return entry[1]
        prefix = "_param_constant" if isinstance(t, Parameter) else "_tensor_constant"
        name = f"{prefix}{self.counts[prefix]}"
        self.counts[prefix] += 1
        setattr(self.root, name, t)
        node = self.graph.get_attr(name)
        _set_meta(node, t)
        self.track(t, node)
        return node

    def to_arg(self, value: Any, as_list: bool = False) -> Any:
        if isinstance(value, Tensor):
            return self.node_of(value)
        if isinstance(value, (list, tuple)):
            items = [self.to_arg(v) for v in value]
            return items if as_list or isinstance(value, list) else tuple(items)
        if isinstance(value, dict):
            return {k: self.to_arg(v) for k, v in value.items()}
        return value

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        decomposition = self.decompositions.get(func)
        if decomposition is not None:
            with self:  # the decomposition's own ops are recorded
                return decomposition(*args, **kwargs)
        out = func(*args, **kwargs)
        node_args, node_kwargs = self._call_args(func, args, kwargs)
        name = func._op.schema.name
        node = self.graph.create_node("call_function", func, node_args, node_kwargs, name=name)
        _set_meta(node, out)
        if isinstance(out, Tensor):
            self.track(out, node)
        elif isinstance(out, (tuple, list)):
            for i, o in enumerate(out):
                if isinstance(o, Tensor):
                    item = self.graph.call_function(operator.getitem, (node, i))
                    _set_meta(item, o)
                    self.track(o, item)
        return out

    def _call_args(self, func: Any, args: tuple, kwargs: dict) -> tuple:
        """The node's args and kwargs: schema-ordered values with trailing defaults left out
        and keyword-only arguments as kwargs (as torch's graphs show calls)."""
        positional: list = []
        by_name: dict = {}
        schema_args = func._op.schema.args
        values = list(args) + [kwargs.get(a.name, a.default) for a in schema_args[len(args):]]
        for a, v in zip(schema_args, values):
            is_default = a.has_default and _equal(v, a.default)
            v = self.to_arg(v, as_list=a.type.endswith("]"))
            if a.kwarg_only:
                if not is_default:
                    by_name[a.name] = v
            else:
                positional.append((v, is_default))
        while positional and positional[-1][1]:
            positional.pop()
        return tuple(v for v, _ in positional), by_name


def _equal(value: Any, default: Any) -> bool:
    if value is default:
        return True
    if isinstance(value, Tensor) or isinstance(default, Tensor):
        return False
    if isinstance(value, list):
        value = tuple(value)
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):
        return False


def _placeholder_names(f: Callable, n_args: int) -> list:
    """`x_1` for parameter x, `arg<i>_1` past the named parameters (torch's names)."""
    names: list = []
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    if not any(p.kind == p.VAR_POSITIONAL for p in params):  # else all are arg<i>_1
        names = [f"{p.name}_1" for p in params
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = names[:n_args]
    return names + [f"arg{i}_1" for i in range(len(names), n_args)]


def _bind_input(mode: _ProxyMode, graph: Graph, value: Any, node: Node) -> None:
    """Track the tensors of one argument: the argument itself, or inside containers through
    getitem nodes."""
    if isinstance(value, Tensor):
        mode.track(value, node)
        _set_meta(node, value)
        return
    items: Any = None
    if isinstance(value, (list, tuple)):
        items = enumerate(value)
    elif isinstance(value, dict):
        items = value.items()
    if items is None:
        node.meta["val"] = value
        return
    for key, item in items:
        if _holds_tensor(item):
            _bind_input(mode, graph, item, graph.call_function(operator.getitem, (node, key)))


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_tensor(v) for v in value.values())
    return False


def make_fx(f: Callable, decomposition_table: dict | None = None, tracing_mode: str = "real",
            _allow_non_fake_inputs: bool = False, *, pre_dispatch: bool = False,
            record_module_stack: bool = False, _allow_fake_constant: bool = False,
            _error_on_data_dependent_ops: bool = True) -> Callable[..., GraphModule]:
    """Return a function that runs `f` on its arguments and returns a GraphModule of the ops
    the dispatcher ran (NOTE [Op-level tracing]).

    tracing_mode "real" runs f on the given tensors; "fake" runs it on copies of them (so
    in-place ops in f leave the arguments alone). `decomposition_table` maps an OpOverload to a
    function run instead of it, whose ops are recorded. pre_dispatch is accepted for
    compatibility: retrograd records ops at one level only.

    >>> import retrograd
    >>> gm = make_fx(lambda x, y: retrograd.sin(x) * y)(retrograd.ones(2), retrograd.ones(2))
    >>> print(gm.code.strip())
    def forward(self, x_1, y_1):
        sin = retrograd.ops.aten.sin.default(x_1);  x_1 = None
        mul = retrograd.ops.aten.mul.Tensor(sin, y_1);  sin = y_1 = None
        return mul
    """
    if tracing_mode not in ("real", "fake"):
        raise NotImplementedError(f"make_fx: tracing_mode={tracing_mode!r} is not supported "
                                  "(retrograd traces with 'real' or 'fake')")

    def wrapped(*args: Any) -> GraphModule:
        if tracing_mode == "fake":
            args = tuple(_copy_tensors(a) for a in args)
        graph = Graph()
        root = Module()
        mode = _ProxyMode(graph, root, dict(decomposition_table or {}))
        for name, a in zip(_placeholder_names(f, len(args)), args):
            _bind_input(mode, graph, a, graph.placeholder(name))
        with mode:
            out = f(*args)
        graph.output(mode.to_arg(out))
        return GraphModule(root, graph, getattr(f, "__name__", "f"))

    return wrapped


def _copy_tensors(value: Any) -> Any:
    if isinstance(value, Tensor):
        copy = value.detach().clone()
        return copy.requires_grad_(value.requires_grad) if value.is_leaf else copy
    if isinstance(value, (list, tuple)):
        return type(value)(_copy_tensors(v) for v in value)
    if isinstance(value, dict):
        return {k: _copy_tensors(v) for k, v in value.items()}
    return value
