"""GraphModule: an nn.Module whose forward is generated from a Graph (torch.fx.GraphModule)."""

from __future__ import annotations

import copy
from typing import Any

from retrograd._ops.codegen import compile_function
from retrograd._tensor import Tensor
from retrograd.fx.graph import Graph
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """Give `to_module` the attribute at dotted `target` of `from_module`, making empty
    Modules for the path in between (a tensor that is not a Parameter becomes a buffer)."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:  # the whole submodule is already there
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    _assign(getattr(from_module, field), to_module, field)


def _assign(value: Any, to_module: Module, field: str) -> None:
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        to_module.register_buffer(field, value)
    else:
        setattr(to_module, field, value)


def _assign_attr(value: Any, to_module: Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    _assign(value, to_module, field)


class GraphModule(Module):
    """A Module made from `graph`: it holds the parameters, buffers, submodules and constants the
    graph reads from `root` (a Module, or a dict from dotted names to values), and its forward is
    Python generated from the graph (see `.code`; tracebacks and pdb show that source).

    >>> import retrograd
    >>> from retrograd.fx import symbolic_trace
    >>> gm = symbolic_trace(lambda x: retrograd.relu(x) + 1)
    >>> print(gm.code.strip())
    def forward(self, x):
        relu = retrograd.relu(x);  x = None
        add = relu + 1;  relu = None
        return add
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # each instance gets a class of its own: recompile() sets forward on it
        if "_impl_of" not in cls.__dict__:
            cls = type("GraphModuleImpl", (cls,), {"_impl_of": cls})
        return super().__new__(cls)

    def __init__(self, root: Module | dict, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        type(self).__name__ = type(self).__qualname__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.meta: dict = {}
        self.graph = graph

    @property
    def graph(self) -> Graph:
        """The graph this module runs; setting it regenerates forward."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of forward, generated from the graph."""
        return self._code

    def recompile(self) -> Any:
        """Regenerate forward from the graph (call after editing it); returns the PythonCode."""
        code = self._graph.python_code(root_module="self")
        self._code = code.src
        cls = type(self)
        name = cls.__name__
        cls.forward = compile_function("forward", code.src.split("\n"), dict(code.globals),
                                       f"fx {name}.forward", f"{name}.forward")
        return code

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install `m` at dotted `target`, making empty Modules on the way; False if a
        non-Module attribute is in the way."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at dotted `target`; False if there is none."""
        *prefix, field = target.split(".")
        mod: Any = self
        for item in prefix:
            mod = getattr(mod, item, None)
            if not isinstance(mod, Module):
                return False
        if not isinstance(getattr(mod, field, None), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no call_module or get_attr node reaches."""
        used: set = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                used.update(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
                if node.op == "call_module":  # all of a called module's own submodules
                    sub = self.get_submodule(node.target)
                    used.update(f"{node.target}.{name}" for name, _ in sub.named_modules()
                                if name)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:
        """The generated code as a class definition (printed unless print_output=False)."""
        code = self._graph.python_code("self", verbose=True).src
        lines = code.strip("\n ").split("\n")
        text = (f"class {type(self).__name__}(retrograd.nn.Module):\n"
                + "".join(f"    {line}\n" for line in lines))
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    def __deepcopy__(self, memo: dict) -> GraphModule:
        holder = Module()
        memo[id(self)] = holder
        state = copy.deepcopy(self.__dict__, memo)
        object.__setattr__(holder, "__dict__", state)
        out = GraphModule(holder, state["_graph"], type(self).__name__)
        out.meta = state.get("meta", {})
        return out

    def __reduce__(self) -> tuple:
        # the class is made per instance, so a GraphModule is pickled as what rebuilds it: the
        # attributes its graph reads, the graph, its class name, training flag and meta
        attrs = {}
        for node in self._graph.nodes:
            if node.op in ("get_attr", "call_module"):
                obj: Any = self
                for atom in node.target.split("."):
                    obj = getattr(obj, atom)
                attrs[node.target] = obj
        return (_rebuild, (attrs, self._graph, type(self).__name__, self.training, self.meta))

    def __copy__(self) -> GraphModule:
        out = GraphModule(self, self._graph, type(self).__name__)
        out.meta = dict(self.meta)
        return out


def _rebuild(attrs: dict, graph: Graph, class_name: str, training: bool,
             meta: dict) -> GraphModule:
    gm = GraphModule(attrs, graph, class_name)
    gm.train(training)
    gm.meta = meta
    return gm
