"""Generate Python that calls NumPy from a graph (NOTE [Compiler pipeline], stage 5).

Each op node becomes one line: a NumPy call for the common pointwise ops and matmul, otherwise
the op's own NumPy kernel (the function the op runner calls), with the dtype casts the runner's
promotion would make written out. After each line the values nothing reads any more are dropped
(`a = b = None`), and a pointwise result is written with `out=` into a dead buffer of its shape
and dtype when no live value shares that buffer's memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._compiler.capture import Functional
from retrograd._compiler.graph import Graph, Node, last_uses
from retrograd._compiler.helpers import AS_STRIDED, GETITEM, Helper
from retrograd._ops.codegen import compile_function
from retrograd._ops.dispatch import OpOverload

# op name -> (NumPy function, number of tensor arguments it takes) for ops that are one ufunc
# when every tensor argument already has the result's dtype
_UFUNCS = {"add.Tensor": ("np.add", 2), "sub.Tensor": ("np.subtract", 2),
           "mul.Tensor": ("np.multiply", 2), "div.Tensor": ("np.true_divide", 2),
           "neg": ("np.negative", 1), "exp": ("np.exp", 1), "tanh": ("np.tanh", 1),
           "relu": ("np.maximum", 1)}


class Generated:
    """A generated function and its source."""

    def __init__(self, fn: Callable, source: str, constants: dict) -> None:
        self.fn = fn
        self.source = source
        self.constants = constants


def _is_literal(v: Any) -> bool:
    if v is None or type(v) in (bool, int, str):
        return True
    if type(v) is float:
        return bool(np.isfinite(v))
    if type(v) in (tuple, list):
        return all(_is_literal(x) for x in v)
    return False


class _Writer:
    def __init__(self, graph: Graph, reuse: bool) -> None:
        self.graph = graph
        self.reuse = reuse
        self.ns: dict = {"np": np, "_asarray": np.asarray}
        self.constants: dict = {}  # name -> value of non-literal constants
        self.lines: list = []

    def const(self, value: Any) -> str:
        if _is_literal(value):
            return repr(value)
        for name, v in self.constants.items():
            if v is value:
                return name
        name = f"_c{len(self.constants)}"
        self.constants[name] = value
        return name

    def expr(self, value: Any) -> str:
        if isinstance(value, Node):
            return value.name
        if isinstance(value, list) and any(isinstance(v, Node) for v in value):
            return "[" + ", ".join(self.expr(v) for v in value) + "]"
        return self.const(value)

    def kernel_name(self, target: Any) -> str:
        if isinstance(target, Helper):
            self.ns[target.code_name] = target.kernel
            return target.code_name
        op = target._op if isinstance(target, OpOverload) else target.op
        name = "aten_" + op.name.replace(".", "_")
        self.ns[name] = op.forward
        return name

    def call_args(self, node: Node) -> list:
        """The kernel's arguments, with the runner's promotion casts."""
        casts = node.meta.get("casts", {})
        out = []
        for i, a in enumerate(node.args):
            text = self.expr(a)
            cast = casts.get(i)
            if isinstance(cast, np.dtype):
                text = f"{text}.astype({self.const(cast)})"
            elif cast is not None:
                text = self.const(cast[1])
            out.append(text)
        return out

    def ufunc(self, node: Node) -> tuple | None:
        """(NumPy call prefix, argument texts) if node is one plain ufunc call."""
        if not isinstance(node.target, OpOverload) or node.meta.get("casts"):
            return None
        spec = _UFUNCS.get(node.target._op.name)
        val = node.meta.get("val")
        if spec is None or not isinstance(val, np.ndarray) or val.dtype.kind != "f" or \
                val.ndim == 0:  # a 0-d ufunc result is a NumPy scalar
            return None
        fn, n = spec
        args = list(node.args)
        if len(args) > n and args[n] != 1:  # alpha
            return None
        tensors = args[:n]
        if not isinstance(tensors[0], Node):
            return None
        for a in tensors:
            if isinstance(a, Node):
                v = a.meta.get("val")
                if not isinstance(v, np.ndarray) or v.dtype != val.dtype:
                    return None
            elif type(a) not in (int, float):
                return None
        texts = [self.expr(a) for a in tensors]
        if fn == "np.maximum":
            texts.append("0")
        return fn, texts


def _alias_groups(graph: Graph) -> dict:
    """node -> the node whose buffer it may share (from the captured values' memory)."""
    group: dict = {}

    def find(n):
        while group.get(n, n) is not n:
            n = group[n]
        return n

    for node in graph.nodes:
        if node.op != "call_function":
            continue
        val = node.meta.get("val")
        view = node.target in (AS_STRIDED, GETITEM) or (
            isinstance(node.target, OpOverload) and node.target._op.is_view) or \
            node.meta.get("alias", False)
        for i in node.inputs():
            iv = i.meta.get("val")
            if view or (
                    isinstance(val, np.ndarray) and isinstance(iv, np.ndarray)
                    and np.may_share_memory(val, iv)):
                group[find(node)] = find(i)
    return {n: find(n) for n in graph.nodes}


# the generated code's calling convention: bumped when it changes, so cached sources rebuild
FORMAT = 2


def generate(graph: Graph, name: str, label: str, reuse: bool = True,
             take_list: bool = False) -> Generated:
    """`take_list`: the function takes its inputs as one list, which it empties, so a value
    is freed at its last use (the caller holds no reference: the backward's saved values)."""
    lines, ns, constants = _write(graph, name, reuse, take_list)
    fn = compile_function(name, lines, ns, label, name)
    source: str = fn.__retrograd_source__  # type: ignore[attr-defined]
    return Generated(fn, source, constants)


def namespace_for(graph: Graph, reuse: bool = True) -> dict:
    """The names generated code for `graph` refers to (kernels, constants)."""
    return _write(graph, "f", reuse)[1]


def _write(graph: Graph, name: str, reuse: bool, take_list: bool = False) -> tuple:
    w = _Writer(graph, reuse)
    inputs = [n.name for n in graph.placeholders()]
    if take_list:
        lines = [f"def {name}(_in):"]
        if inputs:
            lines.append(f"    ({', '.join(inputs)},) = _in")
        lines.append("    _in.clear()")
    else:
        lines = [f"def {name}({', '.join(inputs)}):"]
    dead_after = last_uses(graph)
    groups = _alias_groups(graph)
    members: dict = {}
    for n, g in groups.items():
        members.setdefault(g, set()).add(n)
    body = [n for n in graph.nodes if n.op == "call_function"]
    # (shape, dtype) of every later ufunc result, so a dead buffer is kept only if it may serve
    keys_after: list = []
    later: dict = {}
    for node in reversed(body):
        keys_after.append(dict(later))
        val = node.meta.get("val")
        if w.ufunc(node) is not None and isinstance(val, np.ndarray):
            key = (val.shape, val.dtype)
            later[key] = later.get(key, 0) + 1
    keys_after.reverse()
    buffers: set = set()  # values made by a ufunc here that nothing else aliases
    pool: dict = {}       # (shape, dtype) -> names of dead buffers kept for reuse
    outputs = set(graph.output_node.inputs())
    for idx, node in enumerate(body):
        val = node.meta.get("val")
        spec = w.ufunc(node)
        reused = None
        if spec is not None:
            fn, texts = spec
            if reuse and node not in outputs:
                key = (val.shape, val.dtype)
                if pool.get(key):
                    reused = pool[key].pop()
                else:
                    # an argument's own buffer, dying here
                    for i in node.inputs():
                        if i in buffers and i in dead_after.get(node, ()) and \
                                (i.meta["val"].shape, i.meta["val"].dtype) == key:
                            reused = i.name
                            break
            out = "" if reused is None else f", out={reused}"
            lines.append(f"    {node.name} = {fn}({', '.join(texts)}{out})")
            if members[groups[node]] == {node}:
                buffers.add(node)
        elif isinstance(node.target, Functional):
            args = w.call_args(node)
            k = w.kernel_name(node.target)
            lines.append(f"    {node.name} = np.array({args[0]}, copy=True)")
            lines.append(f"    {k}({', '.join([node.name] + args[1:])})")
        elif node.target is GETITEM:
            lines.append(f"    {node.name} = _asarray({node.args[0].name}[{node.args[1]}])")
        else:
            k = w.kernel_name(node.target)
            call = f"{k}({', '.join(w.call_args(node))})"
            multi = isinstance(val, tuple)
            lines.append(f"    {node.name} = {call if multi else f'_asarray({call})'}")
        drop = [] if reused is None else [reused]
        for d in dead_after.get(node, ()):
            if d.name == reused:
                continue
            v = d.meta.get("val")
            if d in buffers and reuse and keys_after[idx].get((v.shape, v.dtype)):
                pool.setdefault((v.shape, v.dtype), []).append(d.name)
                continue
            drop.append(d.name)
        if drop:
            lines.append("    " + " = ".join(drop) + " = None")
    outs = graph.output_node.args[0]
    lines.append(f"    return ({''.join(w.expr(o) + ', ' for o in outs)})")
    ns = dict(w.ns)
    ns.update(w.constants)
    return lines, ns, w.constants
