"""A Graph as Python source: `def forward(self, ...)` in torch.fx's layout.

Each line is one node, `name = expression`; after a value's last use the line ends with
`;  a = b = None`, so a value is freed as soon as nothing later needs it (as torch.fx's
generated code does). Targets reachable from the public namespace are spelled by their path
(`retrograd.relu`, `retrograd.ops.aten.mul.Tensor`); anything else becomes a global of the
generated function under a fresh name.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import retrograd
from retrograd.fx._qualname import public_path
from retrograd.fx.graph import _Namespace
from retrograd.fx.node import LITERAL_TYPES, MAGIC, Node


class PythonCode:
    """The source of a generated forward and the globals it runs with."""

    def __init__(self, src: str, globals: dict) -> None:
        self.src = src
        self.globals = globals


class _Globals:
    def __init__(self, graph_names: set) -> None:
        self.values: dict = {"retrograd": retrograd, "device": retrograd.device,
                             "inf": math.inf, "nan": math.nan}
        self._by_id: dict = {id(v): k for k, v in self.values.items()}
        self._names = _Namespace()
        for name in (*self.values, *graph_names):
            self._names._used.add(name)

    def add(self, hint: str, obj: Any) -> str:
        name = self._by_id.get(id(obj))
        if name is None:
            name = self._names.create_name(hint)
            self.values[name] = obj
            self._by_id[id(obj)] = name
        return name


def _attr_path(root: str, target: str) -> str:
    out = root
    for atom in target.split("."):
        out = f"{out}.{atom}" if atom.isidentifier() else f'getattr({out}, "{atom}")'
    return out


class _Emitter:
    def __init__(self, graph: Any) -> None:
        self.globals = _Globals({n.name for n in graph.nodes})

    def repr(self, arg: Any) -> str:
        if isinstance(arg, Node):
            return arg.name
        if isinstance(arg, tuple):
            inner = ", ".join(self.repr(a) for a in arg)
            return f"({inner},)" if len(arg) == 1 else f"({inner})"
        if isinstance(arg, list):
            return "[" + ", ".join(self.repr(a) for a in arg) + "]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{k!r}: {self.repr(v)}" for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return f"slice({self.repr(arg.start)}, {self.repr(arg.stop)}, {self.repr(arg.step)})"
        if isinstance(arg, float) and not math.isfinite(arg):
            return "nan" if math.isnan(arg) else ("inf" if arg > 0 else "-inf")
        if type(arg) in LITERAL_TYPES:
            return repr(arg)
        if isinstance(arg, retrograd.device):
            return repr(arg)
        text = repr(arg)
        if text.startswith("retrograd.") and _resolves(text, arg):
            return text  # dtypes, memory formats, layouts
        hint = getattr(arg, "__name__", None) or type(arg).__name__
        return self.globals.add(_snake(hint), arg)

    def call_args(self, args: tuple, kwargs: dict) -> str:
        parts = [self.repr(a) for a in args]
        parts += [f"{k} = {self.repr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def expression(self, node: Node, root: str) -> str:
        op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
        if op == "get_attr":
            return _attr_path(root, target)
        if op == "call_module":
            return f"{_attr_path(root, target)}({self.call_args(args, kwargs)})"
        if op == "call_method":
            return f"{self.repr(args[0])}.{target}({self.call_args(args[1:], kwargs)})"
        fmt = MAGIC.get(target) if not kwargs and _hashable(target) else None
        if fmt is not None and fmt.count("{}") == len(args):
            return fmt.format(*(self.repr(a) for a in args))
        if target is getattr and len(args) == 2 and not kwargs and isinstance(args[1], str) \
                and args[1].isidentifier():
            return f"{self.repr(args[0])}.{args[1]}"
        path = public_path(target)
        if path is None:
            hint = getattr(target, "__name__", None) or type(target).__name__
            if getattr(builtins, hint, None) is target:
                path = hint
            else:
                path = self.globals.add(_snake(hint), target)
        return f"{path}({self.call_args(args, kwargs)})"


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _snake(name: str) -> str:
    from retrograd.fx.graph import _snake_case

    return _snake_case(name)


def _resolves(path: str, obj: Any) -> bool:
    value: Any = retrograd
    for atom in path.split(".")[1:]:
        value = getattr(value, atom, None)
        if value is None:
            return False
    return value is obj


_SHORT_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                 "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
                 "bool": "b8", "complex64": "c64", "complex128": "c128"}


def _annotation(node: Node) -> str:
    """`: "f32[2, 3]"` for a node whose meta holds a tensor value (print_readable's form)."""
    val = node.meta.get("val")
    if not isinstance(val, retrograd.Tensor):
        return ""
    name = str(val.dtype).rpartition(".")[2]
    dims = ", ".join(str(d) for d in val.shape)
    return f': "{_SHORT_DTYPES.get(name, name)}[{dims}]"'


def python_code(graph: Any, root_module: str = "self", verbose: bool = False) -> PythonCode:
    """The source of `forward` for `graph` and its globals (see the module docstring);
    `verbose` adds each tensor value's dtype and shape (`sin: "f32[2, 3]" = ...`)."""
    emit = _Emitter(graph)
    nodes = list(graph.nodes)
    # each value is freed right after the node that uses it last
    last_uses: dict = {}
    seen: set = set()
    for node in reversed(nodes):
        for inp in node.all_input_nodes:
            if inp not in seen:
                seen.add(inp)
                last_uses.setdefault(node, []).append(inp)
    params = [root_module]
    body = []
    for node in nodes:
        if node.op == "placeholder":
            default = f" = {emit.repr(node.args[0])}" if node.args else ""
            note = _annotation(node) if verbose else ""
            params.append(f"{node.target}{note}{default}")
            if node.name != node.target:
                body.append(f"{node.name} = {node.target}")
            continue
        if node.op == "output":
            body.append(f"return {emit.repr(node.args[0])}")
            continue
        note = _annotation(node) if verbose else ""
        line = f"{node.name}{note} = {emit.expression(node, root_module)}"
        dead = [n.name for n in last_uses.get(node, ()) if n.op != "output"]
        if not node.users:
            dead.append(node.name)
        if dead:
            line += ";  " + " = ".join(dead) + " = None"
        body.append(line)
    if verbose:  # no stack traces are recorded; torch's readable form says so
        body.insert(0, "# No stacktrace found for following nodes")
    src = (f"\n\n\ndef forward({', '.join(params)}):\n"
           + "".join(f"    {line}\n" for line in body) + "    ")
    return PythonCode(src, emit.globals.values)
