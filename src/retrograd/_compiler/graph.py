"""The compiler's graph: an ordered list of nodes, each a placeholder, an op call or the output,
with torch.fx's names (op, target, args, kwargs, meta, users) and a readable Python listing.

A node's meta["val"] is the value it had while the graph was captured (an ndarray, a tuple of
them for a multi-output op, or a Python value); meta["saved_name"] is set on packed values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


class Node:
    __slots__ = ("graph", "name", "op", "target", "args", "kwargs", "meta", "users", "_read")

    def __init__(self, graph: Graph, name: str, op: str, target: Any, args: tuple,
                 kwargs: dict | None = None) -> None:
        self.graph = graph
        self.name = name
        self.op = op  # "placeholder" | "call_function" | "output"
        self.target = target
        self.args = args
        self.kwargs = kwargs or {}
        self.meta: dict = {}
        self.users: dict = {}
        self._read: tuple = ((), None, None)  # (inputs, the args and kwargs they were read from)

    def inputs(self) -> tuple:
        """The nodes this node reads, in order, each once (read again when args or kwargs are
        replaced: nothing edits them in place)."""
        read = self._read
        if read[1] is self.args and read[2] is self.kwargs:
            return read[0]
        seen: dict = {}
        for a in self.args:
            if type(a) is Node:
                seen[a] = None
            elif isinstance(a, (list, tuple)):
                _collect(a, seen)
        if self.kwargs:
            _collect(tuple(self.kwargs.values()), seen)
        found = tuple(seen)
        self._read = (found, self.args, self.kwargs)
        return found

    def __repr__(self) -> str:
        return self.name


def _collect(value: Any, seen: dict) -> None:
    if isinstance(value, Node):
        seen[value] = None
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, seen)


def map_nodes(value: Any, fn: Callable) -> Any:
    """`value` with every Node in it (inside lists and tuples) replaced by fn(node)."""
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(map_nodes(v, fn) for v in value)
    if isinstance(value, list):
        return [map_nodes(v, fn) for v in value]
    return value


class Graph:
    def __init__(self) -> None:
        self.nodes: list = []
        self._names: dict = {}
        self._used: set = set()
        # dynamic shapes (NOTE [Dynamic shapes]): the probe primes the symbols were captured
        # at; the forward's symbols as (name, placeholder name, dimension); the backward's
        # symbol arguments (after its other inputs)
        self.primes: tuple = ()
        self.sym_defs: list = []
        self.sym_args: list = []

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def _unique(self, base: str) -> str:
        base = base.rstrip("_") or "v"
        while True:
            n = self._names.get(base, 0)
            self._names[base] = n + 1
            name = base if n == 0 else f"{base}_{n}"
            if name not in self._used:
                self._used.add(name)
                return name

    def _add(self, node: Node, at: int | None) -> Node:
        for i in node.inputs():
            i.users[node] = None
        if at is None:
            self.nodes.append(node)
        else:
            self.nodes.insert(at, node)
        return node

    def placeholder(self, name: str, val: Any = None, kind: str | None = None) -> Node:
        node = Node(self, self._unique(name), "placeholder", kind or name, ())
        node.meta["val"] = val
        at = sum(1 for n in self.nodes if n.op == "placeholder")
        return self._add(node, at)

    def call_function(self, target: Any, args: tuple, kwargs: dict | None = None,
                      val: Any = None, name: str | None = None, at: int | None = None) -> Node:
        node = Node(self, self._unique(name or target_name(target)), "call_function", target,
                    tuple(args), kwargs)
        node.meta["val"] = val
        return self._add(node, at)

    def output(self, values: tuple) -> Node:
        return self._add(Node(self, "output", "output", "output", (tuple(values),)), None)

    @property
    def output_node(self) -> Node:
        return self.nodes[-1]

    def placeholders(self) -> list:
        return [n for n in self.nodes if n.op == "placeholder"]

    def erase_unused(self) -> None:
        """Drop op nodes whose values nothing reads (the graph is functional, so this is safe);
        random draws stay (eager draws them: NOTE [Random draws in compiled graphs])."""
        for node in reversed(self.nodes[:]):
            if node.op == "call_function" and not node.users and not node.meta.get("random"):
                self.nodes.remove(node)
                for i in node.inputs():
                    i.users.pop(node, None)

    def python_code(self, name: str = "forward") -> str:
        """The graph as readable Python: one line per op with its captured type, and each value
        dropped after its last use, as torch.fx prints graphs."""
        last_use = last_uses(self)
        primes = self.primes
        args = ", ".join([f'{n.name}: "{describe_node(n, primes)}"'
                          for n in self.placeholders()] +
                         [f'{s}: "Sym({s})"' for s in self.sym_args])
        lines = [f"def {name}(self, {args}):"]
        lines += [f'    {s}: "Sym({s})" = {p}.shape[{d}]' for s, p, d in self.sym_defs]
        for node in self.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                lines.append(f"    return {format_arg(node.args[0])}")
                break
            call = f"{target_name(node.target, qualified=True)}({format_call(node)})"
            line = f'    {node.name}: "{describe_node(node, primes)}" = {call}'
            dead = last_use.get(node, ())
            if dead:
                line += "; " + " = ".join(n.name for n in dead) + " = None"
            lines.append(line)
        return "\n".join(lines) + "\n"


def key_text(graph: Graph) -> str:
    """The graph as text for the cache key: every node's name, op, arguments (constants
    written out) and captured type; python_code's listing without what follows from it (the
    last uses) and without its formatting."""
    primes = graph.primes
    lines = [f"{s}={p}.shape[{d}]" for s, p, d in graph.sym_defs]
    if graph.sym_args:
        lines.append(f"symbols {graph.sym_args}")
    for node in graph.nodes:
        if node.op == "output":
            lines.append(f"return {format_arg(node.args[0])}")
        elif node.op == "placeholder":
            written = node.meta.get("written_back")
            lines.append(f"{node.name}:{describe_node(node, primes)}"
                         + ("" if written is None else f" written back from {written}"))
        else:
            lines.append(f"{node.name}:{describe_node(node, primes)}="
                         f"{target_name(node.target, True)}({format_call(node)})")
    return "\n".join(lines)


def last_uses(graph: Graph) -> dict:
    """node -> the values whose last reader it is (outputs are never dropped)."""
    seen: set = set()
    out: dict = {}
    for node in reversed(graph.nodes):
        if node.op == "output":
            seen.update(node.inputs())
            continue
        for i in node.inputs():
            if i not in seen:
                seen.add(i)
                out.setdefault(node, []).append(i)
    return out


_SHORT_NAMES: dict = {}  # qualified name -> value name
_OP_TEXT: dict = {}  # id(op) -> (op, its OpOverload's text)


def _target_text(target: Any) -> str:
    text = getattr(target, "graph_name", None)
    if text:
        return text
    op = getattr(target, "_op", None)
    if op is None:
        return str(target)
    hit = _OP_TEXT.get(id(op))
    if hit is None or hit[0] is not op:
        hit = _OP_TEXT[id(op)] = (op, str(target))
    return hit[1]


def target_name(target: Any, qualified: bool = False) -> str:
    """aten.add.Tensor for an op (`add` as a value name), a helper's own name otherwise."""
    text = _target_text(target)
    if qualified:
        return text
    short = _SHORT_NAMES.get(text)
    if short is None:
        parts = text.split(".")
        short = _SHORT_NAMES[text] = parts[1] if len(parts) > 2 else parts[-1]
    return short


def format_arg(value: Any) -> str:
    if isinstance(value, Node):
        return value.name
    if isinstance(value, tuple):
        inner = ", ".join(format_arg(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_arg(v) for v in value) + "]"
    if isinstance(value, np.dtype):
        return f"np.{value}"
    if isinstance(value, float) and not np.isfinite(value):
        return f"float('{value}')"
    return repr(value)


def format_call(node: Node) -> str:
    parts = [format_arg(a) for a in node.args]
    parts += [f"{k} = {format_arg(v)}" for k, v in node.kwargs.items()]
    return ", ".join(parts)


_ABBR = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
         "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
         "bool": "b8", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2"}


_DTYPE_TEXT: dict = {}  # np.dtype -> its short name (dtype.name is slow)


def describe_node(node: Node, primes: tuple) -> str:
    """describe() of a node's value, its shape in symbols when the graph has dynamic sizes."""
    shape = node.meta.get("sym_shape")
    if shape is None:
        return describe(node.meta.get("val"), primes)
    return f"{_dtype_text(node.meta['val'].dtype)}[{', '.join(shape)}]"


def _dtype_text(dt: np.dtype) -> str:
    text = _DTYPE_TEXT.get(dt)
    if text is None:
        text = _DTYPE_TEXT[dt] = _ABBR.get(dt.name, dt.name)
    return text


def describe(val: Any, primes: tuple = ()) -> str:
    """f32[3, 4] for an array, as torch's graph listings annotate values (f32[s0, 4] in a
    graph with dynamic shapes: NOTE [Dynamic shapes])."""
    if isinstance(val, np.ndarray):
        text = _dtype_text(val.dtype)
        if primes:
            from retrograd._compiler.symbolic import dim_text

            return f"{text}[{', '.join(dim_text(d, primes) for d in val.shape)}]"
        return f"{text}[{', '.join(map(str, val.shape))}]"
    if isinstance(val, (tuple, list)):
        return ", ".join(describe(v, primes) for v in val)
    return type(val).__name__
