"""Interpreter and Transformer: run a graph node by node, or rewrite it (torch.fx's)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from retrograd.fx.graph import Graph
from retrograd.fx.graph_module import GraphModule
from retrograd.fx.node import Node, map_aggregate, map_arg
from retrograd.fx.proxy import Proxy
from retrograd.nn.modules.module import Module


class Interpreter:
    """Run a GraphModule's graph one node at a time. Each opcode has a method
    (placeholder, get_attr, call_function, call_method, call_module, output) taking
    (target, args, kwargs) with the argument values filled in; override them to change
    what a node does.

    >>> import retrograd
    >>> from retrograd.fx import symbolic_trace
    >>> gm = symbolic_trace(lambda x: retrograd.relu(x) * 2)
    >>> class ReluToSigmoid(Interpreter):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is retrograd.relu:
    ...             target = retrograd.sigmoid
    ...         return super().call_function(target, args, kwargs)
    >>> ReluToSigmoid(gm).run(retrograd.tensor([0.]))
    tensor([1.])
    """

    def __init__(self, module: Module, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph: Graph = graph if graph is not None else module.graph  # type: ignore
        self.env: dict = {}
        self.garbage_collect_values = garbage_collect_values
        self.args_iter: Iterator = iter(())
        # node -> the values whose last use it is (dropped from env after it runs)
        self.user_to_last_uses: dict = {}
        seen: set = set()
        for node in reversed(self.graph.nodes):
            for n in node.all_input_nodes:
                if n not in seen:
                    seen.add(n)
                    self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args: Any, initial_env: dict | None = None,
            enable_io_processing: bool = True) -> Any:
        """Run the graph on `args`; returns what its output node returns."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue  # given in initial_env
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                e.add_note(f"While executing {node.format_node()}")
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, ()):
                    del self.env[dead]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list: list) -> Any:
        """run, taking the arguments as a list that is cleared (so they can be freed)."""
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n: Node) -> Any:
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # --- one method per opcode ----------------------------------------------------------------
    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               "was not passed in!") from None

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: str, args: tuple, kwargs: dict) -> Any:
        return args[0]

    # --- helpers ------------------------------------------------------------------------------
    def fetch_attr(self, target: str) -> Any:
        obj: Any = self.module
        for i, atom in enumerate(target.split(".")):
            if not hasattr(obj, atom):
                path = ".".join(target.split(".")[:i])
                raise RuntimeError(f"Node referenced nonexistent target {path or atom}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple:
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args: Any, n: Node) -> Any:
        def value(node: Node) -> Any:
            if node not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {node}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[node]

        return map_arg(args, value)


class Transformer(Interpreter):
    """Build a new graph from an old one, node by node: each opcode method returns a Proxy in
    the new graph (override them to rewrite); transform() returns the new GraphModule."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        from retrograd.fx._symbolic_trace import Tracer

        self.tracer = Tracer()
        self.tracer.graph = self.new_graph
        self.tracer.root = module

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        default = args[0] if args else _NO_DEFAULT
        if default is _NO_DEFAULT:
            return Proxy(self.new_graph.placeholder(target), self.tracer)
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return Proxy(self.new_graph.get_attr(target), self.tracer)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        if isinstance(result, Proxy) and result.node is not n:
            for k, v in n.meta.items():
                result.node.meta.setdefault(k, v)
        return result

    def transform(self) -> GraphModule:
        """Run every node through the opcode methods and return the rewritten module."""
        result = self.run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(map_aggregate(result, _unwrap))
        return GraphModule(self.module, self.new_graph)

    def output(self, target: str, args: tuple, kwargs: dict) -> Any:
        return args[0]


_NO_DEFAULT = object()


def _unwrap(x: Any) -> Any:
    return x.node if isinstance(x, Proxy) else x
