"""Generate Python that calls NumPy from a graph (NOTE [Compiler pipeline], stage 5).

Each op node becomes NumPy calls: the common pointwise ops, tanh and relu backward, mm, bmm and
addmm are spelled out (the kernel's own arithmetic, in the same order, so values are eager's bit
for bit), every other op calls its NumPy kernel (the function the op runner calls), with the
dtype casts the runner's promotion would make written out. After each line the values nothing
reads any more are dropped (`a = b = None`); a spelled-out result is written with `out=` into a
dead buffer of the same shape, dtype and strides that no live value shares memory with. Only
buffers the generated code made are reused: never an input (the caller's tensors, the
backward's saved values) and never an output, which stays alive; each call makes its own.
The one exception is an input the function writes (an optimizer's update in a compiled training
step) when no compiled backward reads the inputs: its last reader, the in-place op whose value
is written back, writes into the input itself (build._mark_written_back, _written_input).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._compiler.capture import Functional
from retrograd._compiler.graph import Graph, Node, last_uses
from retrograd._compiler.helpers import AS_STRIDED, GETITEM, Helper
from retrograd._compiler.symbolic import SymExpr, has_symbols
from retrograd._ops.codegen import compile_function
from retrograd._ops.dispatch import OpOverload
from retrograd._ops.kernels.activation import _threshold_backward
from retrograd._ops.kernels.blas import MIN_FUSED_SIZE, gemm_update
from retrograd._ops.kernels.linalg import blas_operand, repeated_operands

# op name -> (NumPy function, number of tensor arguments it takes) for ops that are one ufunc
# when every tensor argument already has the result's dtype
_UFUNCS = {"add.Tensor": ("_add", 2), "sub.Tensor": ("_sub", 2),
           "mul.Tensor": ("_mul", 2), "div.Tensor": ("_div", 2),
           "neg": ("_neg", 1), "exp": ("_exp", 1), "tanh": ("_tanh", 1),
           "sin": ("_sin", 1), "cos": ("_cos", 1), "relu": ("_max", 1)}
# the NumPy functions generated code calls, by the short names it uses (one global lookup each)
_NP_NAMES = {"_add": np.add, "_sub": np.subtract, "_mul": np.multiply, "_div": np.true_divide,
             "_neg": np.negative, "_exp": np.exp, "_tanh": np.tanh, "_sin": np.sin,
             "_cos": np.cos, "_max": np.maximum,
             "_gt": np.greater, "_matmul": np.matmul, "_contig": np.ascontiguousarray,
             "_thr_bw": _threshold_backward, "_gemm_update": gemm_update}


class _Plan:
    """How an op node becomes NumPy calls that make a fresh array of its captured shape and
    dtype: emit(out) gives the lines, writing into the dead buffer `out` when it is a name;
    `writable` are the argument nodes whose buffer `out` may be (the calls read them before
    writing it, or elementwise)."""

    __slots__ = ("emit", "writable")

    def __init__(self, emit: Callable, writable: tuple) -> None:
        self.emit = emit
        self.writable = writable


def _zero_strided(v: Any) -> bool:
    """An operand the kernels make contiguous before matmul (linalg.blas_operand)."""
    return isinstance(v, np.ndarray) and blas_operand(v) is not v


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
        self.ones: dict = {}  # dtype -> the 0-d array 1 the generated code reads

    def const(self, value: Any) -> str:
        if _is_literal(value):
            return repr(value)
        for name, v in self.constants.items():
            if v is value or (isinstance(value, np.generic) and type(v) is type(value) and
                              v == value):
                return name
        name = f"_c{len(self.constants)}"
        self.constants[name] = value
        return name

    def expr(self, value: Any) -> str:
        if isinstance(value, Node):
            return value.name
        if isinstance(value, SymExpr):  # a size the call's symbols give (NOTE [Dynamic shapes])
            return value.text
        if isinstance(value, (list, tuple)) and has_symbols(value):
            inner = ", ".join(self.expr(v) for v in value)
            return f"[{inner}]" if isinstance(value, list) else f"({inner},)"
        return self.const(value)

    def converted(self, text: str, scalar: Any) -> str:
        """`text`, a symbolic size, converted as the runner converts a scalar argument to
        `scalar`'s type."""
        if isinstance(scalar, np.generic):
            return f"{self.const(scalar.dtype)}.type({text})"
        return f"{type(scalar).__name__}({text})"

    def one(self, dt: np.dtype) -> np.ndarray:
        arr = self.ones.get(dt)
        if arr is None:
            arr = self.ones[dt] = np.ones((), dt)
        return arr

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
                text = self.converted(text, cast[1]) if isinstance(a, SymExpr) else \
                    self.const(cast[1])
            out.append(text)
        return out

    def scalar_args(self, node: Node) -> list | None:
        """The arguments' texts when every tensor argument has the result's dtype (the
        runner's casts only convert Python scalars), else None."""
        casts = node.meta.get("casts") or {}
        if any(not isinstance(c, tuple) for c in casts.values()):
            return None
        return self.call_args(node)

    def plan(self, node: Node) -> _Plan | None:
        """The node as NumPy calls making a fresh array (see _Plan), if it is one of the ops
        generated code spells out: plain ufuncs, tanh and relu backward, mm, bmm and addmm."""
        if not isinstance(node.target, OpOverload):
            return None
        val = node.meta.get("val")
        # a 0-d ufunc result is a NumPy scalar
        if not isinstance(val, np.ndarray) or val.dtype.kind != "f" or val.ndim == 0:
            return None
        name = node.target._op.name
        texts = self.scalar_args(node)
        if texts is None:
            return None
        args = list(node.args)
        dt = val.dtype

        def same(a: Any) -> bool:
            return isinstance(a, Node) and isinstance(a.meta.get("val"), np.ndarray) and \
                a.meta["val"].dtype == dt

        spec = _UFUNCS.get(name)
        if spec is not None:
            fn, n = spec
            if len(args) > n and args[n] != 1:  # alpha
                return None
            if not same(args[0]) or any(
                    not same(a) and type(a) not in (int, float) and
                    not isinstance(a, np.floating) for a in args[1:n]):
                return None
            ins = texts[:n] + (["0"] if fn == "_max" else [])

            def call(out: str | None) -> list:
                return [f"{node.name} = {fn}({', '.join(ins + [f'out={out}'] * bool(out))})"]

            return _Plan(call, tuple(a for a in args[:n] if isinstance(a, Node)))
        if dt.itemsize < 4:  # float16: the kernels below compute it in float32 or differently
            return None
        if name == "tanh_backward" and same(args[0]) and same(args[1]):
            # the kernel's 1 - y * y, times the gradient, in one buffer
            g, y = texts
            # a 0-d array of the dtype: NumPy takes it faster than a scalar, same result
            one = self.const(self.one(dt))

            def tanh_bw(out: str | None) -> list:
                r = node.name
                o = f", out={out}" if out else ""
                return [f"{r} = _mul({y}, {y}{o})", f"_sub({one}, {r}, out={r})",
                        f"_mul({g}, {r}, out={r})"]

            return _Plan(tanh_bw, (args[1],))  # not g's buffer: the product overwrites it
        if name == "threshold_backward" and same(args[0]) and isinstance(args[1], Node) and \
                type(args[2]) in (int, float):
            g, x, thr = texts

            def thr_bw(out: str | None) -> list:
                o = f", out={out}" if out else ""
                return [f"{node.name} = _thr_bw({g}, {x}, {thr}{o})"]

            return _Plan(thr_bw, (args[0],))
        if name in ("mm", "_matmul_batched", "addmm"):
            ma, mb = [a.meta.get("val") if isinstance(a, Node) else None
                      for a in (args[1:3] if name == "addmm" else args[:2])]
            if isinstance(ma, np.ndarray) and isinstance(mb, np.ndarray) and \
                    repeated_operands(ma, mb):
                return None  # the kernel multiplies one row (or column) and repeats it
        if name in ("mm", "_matmul_batched") and same(args[0]) and same(args[1]) and \
                (name != "mm" or (args[0].meta["val"].ndim == 2 and
                                  args[1].meta["val"].ndim == 2)):
            a, b = (self.matmul_operand(x, t) for x, t in zip(args, texts))
            def matmul(out: str | None) -> list:
                return [f"{node.name} = _matmul({a}, {b}{', out=' + out if out else ''})"]

            return _Plan(matmul, ())
        if name == "addmm" and all(same(x) for x in args[:3]) and args[3:] in ([], [1, 1]) and \
                args[1].meta["val"].ndim == 2 and args[2].meta["val"].ndim == 2 and \
                args[0].meta["val"].shape in (val.shape, val.shape[1:]):
            # the kernel's fast path: the product, then the bias added in place
            bias = texts[0]
            m1, m2 = (self.matmul_operand(x, t) for x, t in zip(args[1:3], texts[1:3]))

            def addmm(out: str | None) -> list:
                r = node.name
                o = f", out={out}" if out else ""
                return [f"{r} = _matmul({m1}, {m2}{o})", f"_add({r}, {bias}, out={r})"]

            return _Plan(addmm, ())
        return None

    def matmul_operand(self, node: Node, text: str) -> str:
        # np_matmul makes an expanded operand contiguous first (BLAS cannot read it); so here
        return f"_contig({text})" if _zero_strided(node.meta.get("val")) else text


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


def _written_input(graph: Graph, node: Node, dead_after: dict, dropped: set, groups: dict,
                   members: dict) -> Node | None:
    """The input an in-place op's functional form may write into: one marked written back
    (build._mark_written_back) with this node's value, read by nothing after this node, nor
    through any view of it."""
    src = node.args[0] if node.args else None
    if not isinstance(src, Node) or src.op != "placeholder":
        return None
    pos = src.meta.get("written_back")
    if pos is None or graph.output_node.args[0][pos] is not node:
        return None
    if src not in dead_after.get(node, ()):
        return None
    if any(m is not src and m is not node and m not in dropped
           for m in members.get(groups.get(src), ())):
        return None
    return src


def _scales_in_place(node: Node, plans: dict, dead_after: dict, dropped: set, groups: dict,
                     members: dict) -> bool:
    """Whether `add_(self, other, alpha)` / `sub_` (an optimizer's update) may scale `other`
    in place: a floating value of the result's dtype in a buffer the generated code made (a
    spelled-out result, maybe seen through views) that nothing reads after this node. The
    kernel computes other * alpha into a temporary first; the product is the same either way,
    and for a weight-sized gradient the temporary costs a pass over fresh memory."""
    if node.target.op.name not in ("add_.Tensor", "sub_.Tensor") or len(node.args) != 3:
        return False
    other, alpha = node.args[1], node.args[2]
    if type(alpha) not in (int, float) or alpha == 1 or not isinstance(other, Node) or \
            node.meta.get("casts"):
        return False
    val, oval = node.meta.get("val"), other.meta.get("val")
    if not isinstance(val, np.ndarray) or not isinstance(oval, np.ndarray) or \
            val.dtype.kind != "f" or oval.dtype != val.dtype:
        return False
    root = groups.get(other)
    if plans.get(root) is None:
        return False
    dying = dead_after.get(node, ())
    return all(m.op != "placeholder" and (m in dropped or m in dying)
               for m in members.get(root, ()))


# NOTE [Fused update GEMM]
# In a compiled training step, `W.sub_(g, alpha=lr)` (or add_) whose gradient g is a product
# `mm(a, b)` that nothing else reads becomes one BLAS call at the product's
# place, W += -lr * (a @ b) with beta = 1 (kernels/blas.py): the weight-sized gradient is never
# written and the update's passes over it disappear. It needs W to be the step's written-back
# input (build._mark_written_back: no compiled backward reads it) that nothing reads between
# the product and the update. The update then rounds once, inside the GEMM, where eager
# rounds the product, its scaling and the subtraction: within an ulp or so of eager, not bit
# for bit (config.verify's tolerance, and torch.compile's). A call the BLAS cannot take as it
# is (another layout, a NumPy without its bundled BLAS, a small matrix) does eager's arithmetic.


def _fused_updates(graph: Graph, body: list, plans: dict, groups: dict,
                   members: dict) -> dict:
    """mm node -> (update node, parameter node, signed alpha) for each update that
    NOTE [Fused update GEMM] folds into its gradient's product."""
    pos = {n: i for i, n in enumerate(body)}
    found: dict = {}
    for upd in body:
        if not isinstance(upd.target, Functional) or upd.kwargs or upd.meta.get("casts") or \
                upd.target.op.name not in ("add_.Tensor", "sub_.Tensor") or \
                len(upd.args) not in (2, 3):
            continue
        w, g = upd.args[0], upd.args[1]
        alpha = upd.args[2] if len(upd.args) == 3 else 1
        if type(alpha) not in (int, float) or not isinstance(g, Node) or \
                not isinstance(w, Node) or w.op != "placeholder":
            continue
        wpos = w.meta.get("written_back")
        if wpos is None or graph.output_node.args[0][wpos] is not upd:
            continue
        mm = groups.get(g)
        if not isinstance(mm, Node) or mm in found or plans.get(mm) is None or \
                mm.target._op.name != "mm" or groups.get(w) is mm:
            continue
        wv, gv, mv = (x.meta.get("val") for x in (w, g, mm))
        if not (isinstance(wv, np.ndarray) and isinstance(gv, np.ndarray) and
                isinstance(mv, np.ndarray)) or wv.dtype not in (np.float32, np.float64) or \
                mv.dtype != wv.dtype or gv.shape != wv.shape or wv.size < MIN_FUSED_SIZE:
            continue
        # g must be the product itself, maybe through views that give it back (a linear
        # layer's t(t(mm)))
        if gv.ctypes.data != mv.ctypes.data or gv.strides != mv.strides or \
                gv.shape != mv.shape:
            continue
        group = members.get(mm, ())
        # the gradient (and its views) feeds the update alone...
        if any(u is not upd and u not in group for m in group for u in m.users):
            continue
        # ...and nothing reads the parameter between the product and the update
        if any(u is not upd and u.op != "output" and pos.get(u, -1) > pos[mm]
               for m in members.get(groups.get(w), ()) for u in m.users):
            continue
        sign = -1 if upd.target.op.name == "sub_.Tensor" else 1
        found[mm] = (upd, w, sign * alpha)
    return found


def _key(node: Node) -> tuple:
    """The layout a buffer is reused by: shape, dtype and strides as captured, so every value
    the generated code makes is laid out as eager's (a view of it works as it did)."""
    v = node.meta["val"]
    return v.shape, v.dtype, v.strides


# the generated code's form: bumped when it changes (its calling convention, or code it now
# writes better), so cached sources rebuild
FORMAT = 7


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
    w.ns.update(_NP_NAMES)
    inputs = [n.name for n in graph.placeholders()]
    if take_list:
        # the backward's symbols (NOTE [Dynamic shapes]) follow its other inputs
        inputs += graph.sym_args
        lines = [f"def {name}(_in):"]
        if inputs:
            lines.append(f"    ({', '.join(inputs)},) = _in")
        lines.append("    _in.clear()")
    else:
        lines = [f"def {name}({', '.join(inputs)}):"]
    lines += [f"    {sym} = {p}.shape[{d}]" for sym, p, d in graph.sym_defs]
    dead_after = last_uses(graph)
    groups = _alias_groups(graph)
    members: dict = {}
    for n, g in groups.items():
        members.setdefault(g, set()).add(n)
    body = [n for n in graph.nodes if n.op == "call_function"]
    plans = {n: w.plan(n) for n in body}
    # the layout of every later planned result, so a dead buffer is kept only if it may serve
    keys_after: list = []
    later: dict = {}
    for node in reversed(body):
        keys_after.append(dict(later))
        if plans[node] is not None:
            key = _key(node)
            later[key] = later.get(key, 0) + 1
    keys_after.reverse()
    dropped: set = set()  # values no later node reads
    buffers: set = set()  # values made by a plan here that nothing else aliases
    pool: dict = {}       # layout -> names of dead buffers kept for reuse
    fused = _fused_updates(graph, body, plans, groups, members)
    # the fused products' views and updates: no line of their own (the product's line does
    # the update); the update's value is the parameter
    folded = {m for mm in fused for m in members[groups[mm]]}
    folded_updates = {spec[0]: spec[1] for spec in fused.values()}
    for idx, node in enumerate(body):
        val = node.meta.get("val")
        plan = plans[node]
        reused = None
        if node in fused:
            param, alpha = fused[node][1:]
            a, b = (w.matmul_operand(x, t) for x, t in zip(node.args, w.call_args(node)))
            lines.append(f"    _gemm_update({param.name}, {a}, {b}, {alpha!r})")
        elif node in folded:
            pass
        elif node in folded_updates:
            lines.append(f"    {node.name} = {folded_updates[node].name}")
        elif plan is not None:
            if reuse:
                key = _key(node)
                if pool.get(key):
                    reused = pool[key].pop()
                else:
                    # an argument's own buffer, dying here
                    for i in plan.writable:
                        if i in buffers and i in dead_after.get(node, ()) and _key(i) == key:
                            reused = i.name
                            break
            lines.extend("    " + line for line in plan.emit(reused))
            if members[groups[node]] == {node}:
                buffers.add(node)
        elif isinstance(node.target, Functional):
            args = w.call_args(node)
            k = w.kernel_name(node.target)
            into = _written_input(graph, node, dead_after, dropped, groups, members)
            if _scales_in_place(node, plans, dead_after, dropped, groups, members):
                # other * alpha into other's own dying buffer, then alpha 1: the kernel's
                # arithmetic, without a temporary as large as the parameter
                lines.append(f"    _mul({args[1]}, {args[2]}, out={args[1]})")
                args[2] = "1"
            if into is not None:
                # the input's new value, written where the caller's tensor is (no copy, and
                # the write-back finds it there)
                lines.append(f"    {k}({', '.join([into.name] + args[1:])})")
                lines.append(f"    {node.name} = {into.name}")
            else:
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
        dropped.update(dead_after.get(node, ()))
        for d in dead_after.get(node, ()):
            if d.name == reused or d in folded:  # (a folded value is never bound)
                continue
            if d in buffers and reuse and keys_after[idx].get(_key(d)):
                pool.setdefault(_key(d), []).append(d.name)
                continue
            drop.append(d.name)
        if drop:
            lines.append("    " + " = ".join(drop) + " = None")
    outs = graph.output_node.args[0]
    lines.append(f"    return ({''.join(w.expr(o) + ', ' for o in outs)})")
    ns = dict(w.ns)
    ns.update(w.constants)
    return lines, ns, w.constants
