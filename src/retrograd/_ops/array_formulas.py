"""Array formulas generated from the Tensor formulas (NOTE [Generated array formulas]).

NOTE [Generated array formulas]
For the ops in GENERATED the array form of each derivative formula (NOTE [Array formulas]) is
not written by hand: it is made from the Tensor formula. On first use with a given key -- the
dtype, shape and strides of every array the formula receives and the value of every other
argument -- the Tensor formula runs once on Tensors around the arrays under the op-level tracer
(make_fx, NOTE [Op-level tracing]), and each recorded op becomes one line calling that op's
NumPy kernel (OpDef.forward) on arrays, with the casts the runner's promotion made written out
(a ufunc op whose arrays already share the result's float dtype, with at most a Python number
beside them, is called as the ufunc itself). A non-array value that is one of the formula's
arguments is read from the argument.

Each formula's function (OpDef.array_formulas) is generated too: a few inline specializations,
each a guard and the code of one trace, then the miss path, which computes the full key, looks
it up in a dictionary of traces (tracing on first use) and adds a specialization while there
are fewer than MAX_INLINE. A guard checks only what the trace can depend on. Every non-array
argument is pinned to its value (and type: 1, 1.0 and True promote differently). The formula
is traced again on arrays with every size above 1 one larger, in the other layout (contiguous
against strided); if that makes the same code, the guard checks dtypes and ndims of the arrays
(an `<arg>_shape` argument only its length), else shapes and strides as well. If in addition
arrays with a leading dim more make the same code, all arrays share one dtype (a 0-d tensor
promotes as a number does) and no kernel is called on an intermediate (on 0-d arrays NumPy
returns scalars), the ndims are not checked either. So a ufunc formula like mul's costs one
dtype check per array over the hand-written expression; reshape's view-or-copy choice makes
its layout part of the guard. The guards are compiled into the function itself (a new
specialization recompiles it in place), so `python -m retrograd.codegen OP` and tracebacks
show them.

A trace is used only if it is a straight line of out-of-place ops on the formula's arguments:
a tensor the tracer did not see made by an op (a constant built behind the dispatcher's back),
an in-place op, or an op that reads a tensor's value into Python makes that key fall back to
running the Tensor formula on arrays wrapped as Tensors. The generated code is also run on the
tracing values (each trace's) and must give the Tensor formula's arrays bit for bit (and pass
the incoming gradient on where the formula does), or the key falls back the same way; so does
a key that cannot be hashed (a list argument). The hand-written array formulas stay where they
are measured faster (see GENERATED and bench/README.md).
"""

from __future__ import annotations

import operator
import re
import threading
from collections.abc import Callable

import numpy as np

from retrograd._ops.codegen import GENERATED as GENERATED_CODE
from retrograd._ops.codegen import compile_function

# ops whose array formulas are generated from their Tensor formulas. The other hot ops (view
# and the other shape ops, mm, addmm, bmm, sum, mean, softmax, log_softmax, nll_loss, gelu, ...)
# keep hand-written array formulas, measured faster (bench/README.md): their traces call
# kernels that validate or copy (view's, expand's, t then mm, a reduction) where the
# hand-written form calls NumPy directly, pin shapes in the guard, allocate where the
# hand-written form works in place (gelu, softmax), or cannot be traced (nll_loss builds its
# matrix from the target's values behind the dispatcher).
GENERATED = frozenset({
    "sin", "cos", "tan", "exp2", "expm1", "log2", "log10", "log1p", "erf", "leaky_relu",
    "lerp.Scalar",
    # hot ops, measured as fast as their hand-written copies were (bench/README.md)
    "add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "neg", "abs", "exp", "log", "sqrt",
    "rsqrt", "tanh", "sigmoid", "reciprocal", "pow.Tensor_Scalar", "clamp", "where.self",
    "relu", "clone", "t",
    # matmul's and reshape's ops that had no array formulas (a transformer block's backward)
    "_matmul_batched", "_reshape_copy",
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
    return tuple(formula_cls(_Specialized(opdef, k, f).fn, f.inputs, f.params, f.joint)
                 for k, f in enumerate(opdef.formulas))


# inline specializations per formula; further keys go through the dictionary of traces
MAX_INLINE = 4


class _Specialized:
    """One formula's generated array function: its inline specializations, each a guard and
    the traced code, then the miss path (full key, dictionary, trace on first use)."""

    def __init__(self, opdef, k: int, formula) -> None:
        self.opdef, self.k, self.formula = opdef, k, formula
        self.params = formula.params
        self.label = f"{opdef.node_name}.array_formula{k}"
        self.slow = _slow_formula(formula.fn)
        self.cache: dict = {}  # full key -> code for that key (or the slow formula)
        self.variants: list = []  # (guard text, body lines, what the guard admits)
        self.ns: dict = {"_nd": np.ndarray, "_asarray": np.asarray, "np": np,
                         "_miss": self.miss, "_cache": self.cache, "__name__": __name__}
        self.fn: Callable | None = None
        self.fn = self._compile()

    def _compile(self) -> Callable:
        """(Re)compile the entry function; a recompiled one takes over the first one's code,
        so plans that hold the function see the new specializations."""
        args = ", ".join(self.params)
        lines = [f"def array_formula({args}):"]
        for guard, body, note in self.variants:
            lines += [f"    # {note}", f"    if {guard}:"]
            lines += ["    " + line for line in body]
        lines.append(f"    return _miss({args})")
        fn = compile_function("array_formula", lines, self.ns,
                              f"{self.opdef.name} {self.label}", self.label)
        if self.fn is None:
            return fn
        old = self.fn.__code__.co_filename
        self.fn.__code__ = fn.__code__
        self.fn.__retrograd_source__ = fn.__retrograd_source__  # type: ignore[attr-defined]
        # the registry of generated code lists the one function under its current filename
        GENERATED_CODE.pop(old, None)
        GENERATED_CODE[fn.__code__.co_filename] = self.fn
        return self.fn

    def miss(self, *values):
        """No inline guard held: look the full key up, tracing on first use."""
        try:
            key = _full_key(self.params, self.opdef, values)
            fn = self.cache.get(key)
        except TypeError:  # a list argument: no key
            return self.slow(*values)
        if fn is None:
            fn = self._make(key, values)
        return fn(*values)

    def _make(self, key: tuple, values: tuple) -> Callable:
        with _LOCK:
            fn = self.cache.get(key)
            if fn is not None:
                return fn
            prefix = str(len(self.cache))
            traced = _trace(self.formula, values, prefix)
            fn = self.slow
            if traced is not None and _checked(self, traced, values):
                lines, ns = traced
                fn = compile_function("array_formula", lines, ns,
                                      f"{self.opdef.name} {self.label} (generated)", self.label)
                SHOWN.setdefault(self.opdef, []).append(fn)
                if len(self.variants) < MAX_INLINE:
                    guard = self._guard(values, lines, prefix)
                    if guard is not None:
                        self.ns.update(ns)
                        self.ns.update(guard[1])
                        self.variants.append((guard[0], lines[1:], guard[2]))
                        self._compile()
            self.cache[key] = fn
            return fn

    def _guard(self, values: tuple, lines: list, prefix: str) -> tuple | None:
        """(condition, namespace, description) under which `lines` stands for the formula, or
        None.

        The code is traced again on arrays of other sizes (every size above 1 one larger, a
        `<arg>_shape` argument alike) and the other layout (contiguous against strided); if
        the formula made the same code, sizes and layouts were not read and the guard checks
        dtypes and ndims only, else it checks shapes and strides too. Other arguments are
        pinned to their values."""
        if "grads" in self.params:
            return None
        relaxed = self._same_code(_resized(self.params, values), lines, prefix)
        # ndims too, if arrays with one more dim make the same code and nothing depends on
        # them: one dtype for all arrays (a 0-d tensor promotes as a number does) and no
        # kernel fed an intermediate (on 0-d arrays NumPy returns scalars)
        dtypes = {v.dtype for v in values if v.__class__ is np.ndarray}
        any_ndim = (relaxed and len(dtypes) <= 1
                    and not any(_KERNEL_ON_VALUE.match(line) for line in lines)
                    and self._same_code(_widened(self.params, values), lines, prefix))
        parts: list = []
        ns: dict = {}
        for p, v in zip(self.params, values):
            part = _guard_part(p, v, relaxed, any_ndim, f"_g{prefix}_{len(ns)}", ns)
            if part is None:
                return None
            parts.append(part)
        arrays = ", ".join(f"{p} {v.dtype}" for p, v in zip(self.params, values)
                           if v.__class__ is np.ndarray)
        scope = ("any shape, layout and ndim" if any_ndim else "these ndims, any sizes and "
                 "layout" if relaxed else "these shapes and strides")
        return " and ".join(parts) or "True", ns, f"{arrays}: {scope}"

    def _same_code(self, values: tuple | None, lines: list, prefix: str) -> bool:
        """The formula traces to `lines` on `values` too (and the code is right there)."""
        if values is None:
            return False
        again = _trace(self.formula, values, prefix)
        return again is not None and again[0] == lines and _checked(self, again, values)


# a kernel called on an intermediate value of the generated code
_KERNEL_ON_VALUE = re.compile(r"\s*(?:v\d+ =|return) k_\w+\(.*\bv\d+\b")


def _checked(spec: _Specialized, traced: tuple, values: tuple) -> bool:
    """The generated code gives the Tensor formula's arrays, bit for bit, on `values`."""
    from retrograd.autograd.grad_mode import no_grad

    lines, ns = traced
    try:
        # compiled for this check only (not kept among the generated functions)
        scratch = dict(ns)
        exec(compile("\n".join(lines) + "\n", "<array formula check>", "exec"),  # noqa: S102
             scratch)
        got = scratch["array_formula"](*values)
        with no_grad():
            want = spec.slow(*values)
    except Exception:  # noqa: BLE001
        return False
    return _same(got, want, values)


def _guard_part(p: str, v, relaxed: bool, any_ndim: bool, name: str,
                ns: dict) -> str | None:
    """The check that argument `p` is like `v` (see _Specialized._guard), or None."""
    if v.__class__ is np.ndarray:
        ns[name] = v.dtype
        head = "" if p == "grad" else f"{p}.__class__ is _nd and "
        if any_ndim:
            return f"{head}{p}.dtype is {name}"
        if relaxed:
            return f"{head}{p}.dtype is {name} and {p}.ndim == {v.ndim}"
        return f"{head}{p}.dtype is {name} and {p}.shape == {v.shape!r} and " \
               f"{p}.strides == {v.strides!r}"
    if v is None:
        return f"{p} is None"
    if type(v) in (bool, int, float, str) and _literal(v):
        return f"{p}.__class__ is {type(v).__name__} and {p} == {v!r}"
    if isinstance(v, np.generic) and v.ndim == 0 and v == v:  # a NumPy scalar (not nan)
        ns[name] = type(v)
        ns[name + "v"] = v
        return f"{p}.__class__ is {name} and {p} == {name}v"
    if type(v) is tuple and _literal(v):
        if any_ndim and p.endswith("_shape"):
            return f"{p}.__class__ is tuple"
        if relaxed and p.endswith("_shape"):
            return f"{p}.__class__ is tuple and len({p}) == {len(v)}"
        return f"{p}.__class__ is tuple and {p} == {v!r}"
    if isinstance(v, np.dtype) or type(v).__name__ == "dtype":
        ns[name] = v
        return f"{p} is {name}"
    return None


def _resized(params: tuple, values: tuple) -> tuple | None:
    """`values` with every array (and `<arg>_shape`) one larger in each size above 1 and in
    the other layout; None if nothing would change."""
    def size(n: int) -> int:
        return n + 1 if n > 1 else n

    out: list = []
    changed = False
    for p, v in zip(params, values):
        if v.__class__ is np.ndarray:
            shape = tuple(size(n) for n in v.shape)
            if v.ndim and (v.flags.c_contiguous or v.flags.f_contiguous):
                # every other element of every dim: strided wherever a size is above 1 (a
                # size-1 dim's stride does not count in NumPy's layout)
                base = np.ones(tuple(2 * n for n in shape), dtype=v.dtype)
                new = base[tuple(slice(None, None, 2) for _ in shape)]
            else:
                new = np.ones(shape, dtype=v.dtype)
            if v.dtype.kind == "f":
                new[...] = 0.75
            out.append(new)
            changed = True
        elif p.endswith("_shape") and type(v) is tuple and all(type(n) is int for n in v):
            out.append(tuple(size(n) for n in v))
            changed = True
        else:
            out.append(v)
    return tuple(out) if changed else None


def _widened(params: tuple, values: tuple) -> tuple | None:
    """`values` with a leading dim of 3 on every array (and `<arg>_shape`)."""
    out: list = []
    changed = False
    for p, v in zip(params, values):
        if v.__class__ is np.ndarray:
            new = np.empty((3,) + v.shape, dtype=v.dtype)
            new[...] = v
            out.append(new)
            changed = True
        elif p.endswith("_shape") and type(v) is tuple and all(type(n) is int for n in v):
            out.append((3,) + v)
            changed = True
        else:
            out.append(v)
    return tuple(out) if changed else None


def _full_key(params: tuple, opdef, values: tuple) -> tuple:
    """Everything a trace may depend on (NOTE [Generated array formulas]); hashed here."""
    parts: list = []
    for p, v in zip(params, values):
        if p == "grads":
            parts.append(_grads_key(v))
        elif v.__class__ is np.ndarray:
            parts.append((v.dtype, v.shape, v.strides))
        elif p in opdef.arg_names or p.startswith("result"):
            # a scalar's type is part of the key: 1, 1.0 and True are equal keys but promote
            # differently
            parts.append((v.__class__, v))
        else:  # shapes, dims and other plain values
            parts.append(v)
    key = tuple(parts)
    hash(key)
    return key


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


def _trace(formula, values: tuple, prefix: str) -> tuple | None:
    """(source lines, namespace) of the code the formula traced to on `values`, or None."""
    from retrograd.autograd.grad_mode import no_grad
    from retrograd.fx.experimental.proxy_tensor import make_fx

    wrapped = [_wrap_value(v) for v in values]
    try:
        with no_grad():
            gm = make_fx(formula.fn)(*wrapped)
            return _emit(formula.params, values, gm.graph, prefix)
    except _Refuse:
        return None
    except Exception:  # noqa: BLE001 - the formula's own error: raised by the Tensor formula
        return None


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


def _emit(params: tuple, values: tuple, graph, prefix: str = "") -> tuple:
    """(source lines, namespace) of the straight-line NumPy code for a traced formula. A
    non-array value that is one of the formula's arguments is read from it by name (the
    guards pin such arguments, or prove them unread but passed on); `prefix` keeps the
    constants of several codes in one namespace apart."""
    from retrograd._ops.dispatch import OpOverload
    from retrograd._ops.registry import _promote
    from retrograd._tensor import Tensor
    from retrograd.fx.node import Node

    # __name__: NumPy's warnings from the ufuncs called here are attributed to this module,
    # which layout.QUIET_MODULES silences as it does the forwards' (torch computes 1/0 quietly)
    ns: dict = {"_nd": np.ndarray, "_asarray": np.asarray, "np": np, "__name__": __name__}
    names: dict = {}
    lines = [f"def array_formula({', '.join(params)}):"]
    consts: list = []
    passed = [(p, v) for p, v in zip(params, values)
              if v.__class__ is not np.ndarray and v is not None]

    def const(v) -> str:
        for p, x in passed:
            if v is x:
                return p
        if _literal(v):
            return repr(v)
        for i, c in enumerate(consts):
            if c is v:
                return f"_c{prefix}_{i}"
        consts.append(v)
        name = f"_c{prefix}_{len(consts) - 1}"
        ns[name] = v
        return name

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
            ret = _out_expr(out, names)
            last = lines[-1]
            if last.startswith(f"    {ret} = "):
                lines[-1] = "    return " + last[len(f"    {ret} = "):]  # no local for it
            else:
                lines.append(f"    return {ret}")
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
            vals = [val(a) for a in args]
            if op.promote is not None:
                # the casts the runner's promotion makes, for the key's dtypes
                tensors = list(vals)
                arrays = [x._data if isinstance(x, Tensor) else x for x in tensors]
                promoted = list(arrays)
                _promote(op, tuple(tensors), promoted)
                for i in op.tensor_idx:
                    if promoted[i] is arrays[i]:
                        continue
                    if type(arrays[i]) is np.ndarray:
                        call[i] = f"{call[i]}.astype({const(promoted[i].dtype)})"
                    else:  # a number converted: the ufunc may take it as it is now
                        call[i] = const(promoted[i])
                        vals[i] = promoted[i]
            out = node.meta.get("val")
            ufunc = _ufunc_for(op, args, call, vals, out)
            if op.name == "t" and isinstance(vals[0], Tensor) and vals[0]._data.ndim == 2:
                # t's kernel on a matrix is its transpose (the ndim is then in the guard)
                name = names[node] = f"v{count}"
                count += 1
                lines.append(f"    {name} = {call[0]}.T")
                continue
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
        elif type(v) not in (float, int):  # a weak scalar: the array's dtype stays
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
