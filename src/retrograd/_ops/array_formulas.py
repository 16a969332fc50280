"""Array formulas generated from the Tensor formulas (NOTE [Generated array formulas]).

NOTE [Generated array formulas]
For the ops in GENERATED the array form of each derivative formula (NOTE [Array formulas]) is
not written by hand: it is made from the Tensor formula. On first use with a given key -- the
dtype, shape and strides of every array the formula receives and the value of every other
argument -- the Tensor formula runs once on Tensors around the arrays under the op-level tracer
(make_fx, NOTE [Op-level tracing]), and each recorded op becomes one line calling that op's
NumPy kernel (OpDef.forward) on arrays, with the casts the runner's promotion made written out
(a binary or unary ufunc op whose arrays already share the result's float dtype is called as
the ufunc itself). The code is compiled with compile_function, so `python -m retrograd.codegen
OP` and tracebacks show it, and kept per key; the function backward calls computes the key and
calls the kept code. Under one key everything a formula could branch on (shapes, layouts --
reshape views or copies by layout --, dtypes, scalar arguments) is fixed, so the trace is the
formula's path for every call with that key.

A trace is used only if it is a straight line of out-of-place ops on the formula's arguments:
a tensor the tracer did not see made by an op (a constant built behind the dispatcher's back),
an in-place op, or an op that reads a tensor's value into Python makes that key fall back to
running the Tensor formula on arrays wrapped as Tensors. The generated code is also run once on
the tracing values and must give the Tensor formula's arrays bit for bit (and pass the incoming
gradient on where the formula does), or the key falls back the same way; so does a key that
cannot be hashed (a list argument). The hand-written array formulas stay where they are measured
faster (see GENERATED).
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable

import numpy as np

from retrograd._ops.codegen import compile_function

# ops whose array formulas are generated from their Tensor formulas. The hot ops (mul, add,
# tanh, mm, relu, sum, view, t, addmm, log_softmax, nll_loss, ...) keep hand-written array
# formulas: measured per call, the key check costs 0.3-0.8 us, and their kernels (view's and
# expand's forward validate sizes, t then mm where mm's copy picks the BLAS layout) cost more
# than the NumPy expression the hand-written form uses, so generating them made each of those
# nodes slower. Ops here ran their Tensor formulas in every backward before.
GENERATED = frozenset({
    "sin", "cos", "tan", "exp2", "expm1", "log2", "log10", "log1p", "erf", "leaky_relu",
    "lerp.Scalar",
})

# ops that read a tensor's value into Python: a trace holding one took a value-dependent path
_VALUE_READS = frozenset({"_local_scalar_dense", "item", "is_nonzero", "equal", "allclose"})

_LOCK = threading.Lock()
# opdef -> generated functions (for `python -m retrograd.codegen`)
SHOWN: dict = {}


def generated_formulas(opdef, formula_cls: type) -> tuple | None:
    """The op's array formulas, generated (None if the op is not in GENERATED)."""
    if opdef.name not in GENERATED or not opdef.formulas:
        return None
    return tuple(formula_cls(_entry(opdef, k, f), f.inputs, f.params, f.joint)
                 for k, f in enumerate(opdef.formulas))


def _entry(opdef, k: int, formula) -> Callable:
    """The function backward calls: the key check, then the code generated for the key."""
    params = formula.params
    args = ", ".join(params)  # the formula's own parameter names
    parts = []
    for p in params:
        if p == "grads":
            parts.append(f"_grads_key({p})")
        elif p == "grad":  # always an array here (backward makes zeros for a missing one)
            parts += [f"{p}.dtype", f"{p}.shape", f"{p}.strides"]
        elif p in opdef.arg_names or p.startswith("result"):
            # a tensor argument may be a Python scalar; an output is an array. A scalar's
            # type is part of the key: 1, 1.0 and True are equal keys but promote differently
            parts.append(f"(({p}.dtype, {p}.shape, {p}.strides) if {p}.__class__ is _nd "
                         f"else ({p}.__class__, {p}))")
        else:  # shapes, dims and other plain values
            parts.append(f"{p}")
    lines = [f"def array_formula({args}):",
             "    try:",
             f"        key = ({''.join(p + ', ' for p in parts)})",
             "        fn = _cache.get(key)",
             "    except TypeError:  # a list argument: no key",
             f"        return _slow({args})",
             "    if fn is None:",
             f"        fn = _make(key, ({args}{',' if len(params) == 1 else ''}))",
             f"    return fn({args})"]
    ns = {"_nd": np.ndarray, "_grads_key": _grads_key}
    cache: dict = {}
    slow = _slow_formula(formula.fn)

    def make(key: tuple, values: tuple) -> Callable:
        fn = _generate(opdef, k, formula, values, slow)
        with _LOCK:
            cache[key] = fn
        return fn

    ns.update(_cache=cache, _slow=slow, _make=make)
    label = f"{opdef.node_name}.array_formula{k}"
    return compile_function("array_formula", lines, ns, f"{opdef.name} {label}", label)


def _grads_key(grads) -> tuple:
    return tuple(None if g is None else (g.dtype, g.shape, g.strides) for g in grads)


def _wrap_value(v):
    from retrograd._tensor import _wrap

    if v.__class__ is np.ndarray:
        return _wrap(v)
    if isinstance(v, tuple) and any(x.__class__ is np.ndarray for x in v):
        return tuple(None if x is None else _wrap(x) for x in v)
    return v


def _unwrap(v):
    from retrograd._tensor import Tensor

    if isinstance(v, Tensor):
        return v._data
    if isinstance(v, (tuple, list)):
        return tuple(_unwrap(x) for x in v)
    return v


def _slow_formula(fn: Callable) -> Callable:
    """The Tensor formula run on arrays: the fallback where no code is generated."""
    def slow(*values):
        return _unwrap(fn(*[_wrap_value(v) for v in values]))
    slow.__qualname__ = "slow_array_formula"
    return slow


class _Refuse(Exception):
    """The trace is not a straight line of kernel calls on the formula's arguments."""


def _generate(opdef, k: int, formula, values: tuple, slow: Callable) -> Callable:
    """Code for one key, or `slow` if the trace cannot stand for it."""
    from retrograd.autograd.grad_mode import no_grad
    from retrograd.fx.experimental.proxy_tensor import make_fx

    wrapped = [_wrap_value(v) for v in values]
    try:
        with no_grad():
            gm = make_fx(formula.fn)(*wrapped)
            lines, ns = _emit(formula.params, gm.graph)
    except _Refuse:
        return slow
    except Exception:  # noqa: BLE001 - the formula's own error: raised by the Tensor formula
        return slow
    label = f"{opdef.node_name}.array_formula{k}"
    fn = compile_function("array_formula", lines, ns, f"{opdef.name} {label} (generated)",
                          label)
    try:
        got = fn(*values)
        with no_grad():
            want = slow(*values)
    except Exception:  # noqa: BLE001
        return slow
    if not _same(got, want, values):
        return slow
    with _LOCK:
        SHOWN.setdefault(opdef, []).append(fn)
    return fn


def _same(a, b, values: tuple) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_same(x, y, values) for x, y in zip(a, b)))
    if a is None or b is None:
        return a is b
    if any(b is v for v in values) != any(a is v for v in values):
        return False  # the incoming gradient passed on must stay that array
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def _literal(v) -> bool:
    if v is None or type(v) in (bool, int, str):
        return True
    if type(v) is float:
        return bool(np.isfinite(v))
    if type(v) in (tuple, list):
        return all(_literal(x) for x in v)
    return False


def _emit(params: tuple, graph) -> tuple:
    """(source lines, namespace) of the straight-line NumPy code for a traced formula."""
    from retrograd._ops.dispatch import OpOverload
    from retrograd._ops.registry import _promote
    from retrograd._tensor import Tensor
    from retrograd.fx.node import Node

    ns: dict = {"_nd": np.ndarray, "_asarray": np.asarray, "np": np}
    names: dict = {}
    lines = [f"def array_formula({', '.join(params)}):"]
    consts: list = []

    def const(v) -> str:
        if _literal(v):
            return repr(v)
        for i, c in enumerate(consts):
            if c is v:
                return f"_c{i}"
        consts.append(v)
        ns[f"_c{len(consts) - 1}"] = v
        return f"_c{len(consts) - 1}"

    def expr(v) -> str:
        if isinstance(v, Node):
            return names[v]
        if isinstance(v, (list, tuple)) and any(isinstance(x, Node) for x in v):
            inner = ", ".join(expr(x) for x in v)
            return f"[{inner}]" if isinstance(v, list) else f"({inner},)"
        if isinstance(v, Tensor):
            raise _Refuse
        return const(v)

    def val(v):
        if isinstance(v, Node):
            return v.meta.get("val")
        if isinstance(v, (list, tuple)):
            return type(v)(val(x) for x in v)
        return v

    placeholders = 0
    count = 0
    for node in graph.nodes:
        if node.op == "placeholder":
            names[node] = params[placeholders]
            placeholders += 1
        elif node.op == "output":
            out = node.args[0]
            lines.append(f"    return {_out_expr(out, names)}")
        elif node.op != "call_function":
            raise _Refuse  # a constant tensor: built outside the dispatcher
        elif node.target is operator.getitem:
            src, i = node.args
            name = names[node] = f"v{count}"
            count += 1
            lines.append(f"    {name} = {names[src]}[{i}]")
            if src.op == "call_function":  # an op's output (not an argument's item)
                lines += [f"    if {name}.__class__ is not _nd:",
                          f"        {name} = _asarray({name})"]
        elif isinstance(node.target, OpOverload):
            op = node.target._op
            if op.inplace_idx or op.schema.name in _VALUE_READS or op.written_lists:
                raise _Refuse
            args = _schema_args(op, node)
            call = [expr(a) for a in args]
            if op.promote is not None:
                # the casts the runner's promotion makes, for the key's dtypes
                tensors = [val(a) for a in args]
                arrays = [x._data if isinstance(x, Tensor) else x for x in tensors]
                promoted = list(arrays)
                _promote(op, tuple(tensors), promoted)
                for i in op.tensor_idx:
                    if promoted[i] is arrays[i]:
                        continue
                    if type(arrays[i]) is np.ndarray:
                        call[i] = f"{call[i]}.astype({const(promoted[i].dtype)})"
                    else:
                        call[i] = const(promoted[i])
            out = node.meta.get("val")
            ufunc = _ufunc_for(op, args, call, [val(a) for a in args], out)
            if ufunc is not None:
                kname, call = ufunc
            else:
                kname = "k_" + op.name.replace(".", "_")
                ns[kname] = op.forward
            name = names[node] = f"v{count}"
            count += 1
            lines.append(f"    {name} = {kname}({', '.join(call)})")
            # shapes are fixed by the key: only a 0-d result may come back as a NumPy scalar
            if not op.multi and not (isinstance(out, Tensor) and out._data.ndim):
                lines += [f"    if {name}.__class__ is not _nd:",
                          f"        {name} = _asarray({name})"]
        else:
            raise _Refuse
    return lines, ns


# ops whose kernel is one ufunc when every array argument already has the result's float
# dtype (so no promotion happens): name -> (NumPy call, number of tensor arguments)
_UFUNCS = {"add.Tensor": ("np.add", 2), "sub.Tensor": ("np.subtract", 2),
           "mul.Tensor": ("np.multiply", 2), "div.Tensor": ("np.true_divide", 2),
           "neg": ("np.negative", 1), "exp": ("np.exp", 1), "tanh": ("np.tanh", 1)}


def _ufunc_for(op, args: list, call: list, values: list, out) -> tuple | None:
    """(NumPy call, argument texts) if the op is one ufunc for these arguments, else None."""
    from retrograd._tensor import Tensor

    spec = _UFUNCS.get(op.name)
    if spec is None or not isinstance(out, Tensor) or out._data.dtype.kind != "f":
        return None
    fn, n = spec
    if len(args) > n and args[n] != 1:  # alpha
        return None
    for v in values[:n]:
        if isinstance(v, Tensor):
            if v._data.dtype != out._data.dtype:
                return None
        elif type(v) is not float:
            return None
    if not isinstance(values[0], Tensor):
        return None
    return fn, call[:n]


def _out_expr(out, names: dict) -> str:
    from retrograd.fx.node import Node

    if out is None:
        return "None"
    if isinstance(out, Node):
        return names[out]
    if isinstance(out, (tuple, list)):
        return "(" + "".join(_out_expr(o, names) + ", " for o in out) + ")"
    raise _Refuse


def _schema_args(op, node) -> list:
    """The node's arguments in schema order, defaults filled in."""
    out = list(node.args)
    for a in op.schema.args[len(out):]:
        if a.name in node.kwargs:
            out.append(node.kwargs[a.name])
        elif a.has_default:
            out.append(a.default)
        else:
            raise _Refuse
    return out
