"""The dual fast path: tangents of simple ops computed on arrays, without the general mode.

NOTE [Dual fast path]
While a dual level is active the forward-AD mode (NOTE [Forward-mode derivatives]) sees every
op. Its general path runs the op, then computes the tangent as further ops on Tensors (each a
full op call through the dispatcher). When the forward-AD mode is the only active mode and the
call is simple, dispatch hands the op here instead, and primal and tangent are computed on the
NumPy arrays directly: only the result and its tangent become Tensors.

A call is simple when the op is out of place, not a view, has one output and no Tensor[]
argument, its rule is "linear", "bilinear" or "elementwise" (with array formulas, NOTE [Array
formulas]), every tensor argument is a plain Tensor of one floating dtype (no promotion happens,
Python int/float scalars aside), every tangent is a plain Tensor of that dtype, and nothing
requires grad while grad mode is on (no graph, so forward-over-reverse stays general). Then:
  linear       the op's kernel (OpDef.forward) on the tangent arrays, zeros for an input
               without one and 0 for a scalar in a tensor position (add and sub: the signed
               zeros of forward_ad.ABSENT_TERM; with alpha 1 on row-major arrays or Python
               numbers their ufunc itself, `alpha_ufunc`);
  bilinear     the sum over inputs with a tangent of the kernel with that input replaced;
  elementwise  the sum over inputs with a tangent of the input's array formula with the tangent
               as `grad` (the formula is linear in `grad`; the Jacobian is diagonal).
which is what the general path computes with Tensor ops, in the same order (an array formula
that rounds differently from its Tensor formula, as gelu's tanh form does by an ulp, gives its
tangent that rounding, as it gives backward's gradient). A contribution that
comes back with another dtype than the output, or a tangent that does not have the output's
shape, is redone by the general rule on Tensors. Everything else returns NotImplemented and the
general mode runs. `force_general` (a list, for tests) sends every op the general way.
"""

from __future__ import annotations

import numpy as np

from retrograd._autograd.state import state
from retrograd._ops import dispatch, forward_ad
from retrograd._ops.codegen import compile_function, wrap_lines
from retrograd._ops.forward_ad import _enabled, levels, set_tangent, tangent_of
from retrograd._ops.registry import _dtype_of, _shape_of, _strides_of, run_eager
from retrograd._tensor import TENSOR_FIELDS, Tensor, _is_wrapper, _wrap

force_general = [False]

_LINEAR, _BILINEAR, _ELEMENTWISE = 1, 2, 3
_kinds: dict = {}  # OpDef -> 0 (general) or its kind
_nd = np.ndarray


def _kind_of(op) -> int:
    if (op.inplace_idx or op.is_view or op.multi or op.list_idx or op.n_outputs != 1
            or not op.tensor_idx):
        return 0
    rule = op.jvp_rule
    if rule == "linear":
        return _LINEAR
    if rule == "bilinear":
        return _BILINEAR
    if rule == "elementwise" and op.array_formulas is not None:
        return _ELEMENTWISE
    return 0


def _getter(op, name: str):
    """(kind, index) saying where an array formula's parameter comes from in a call."""
    if name == "grad":
        return ("grad", 0)
    if name == "grads":
        return ("grads", 0)
    if name == "output_mask":
        return ("mask", 0)
    if name in op.arg_names:
        return ("arg", op.arg_names.index(name))
    if name == "result" or name == "result0" or (
            op.schema.returns and op.schema.returns[0].name == name):
        return ("result", 0)
    base, _, what = name.rpartition("_")
    return (what, op.arg_names.index(base))  # shape, dtype, strides


class _FastPaths(dict):
    """OpDef -> its generated fast path, made on first use (dispatch indexes it directly)."""

    def __missing__(self, op):
        fn = self[op] = _make(op)
        return fn


_fns = _FastPaths()


def dual_fast(op, args: tuple):
    """The op's result with its tangent set, or NotImplemented (the general mode runs)."""
    return _fns[op](args)


def _untangented(a, lv) -> bool:
    """Whether `a` is not a tensor (None, a number) or a tensor without a tangent whose class
    does not dispatch its ops (a Parameter does not)."""
    if not isinstance(a, Tensor):
        return True
    if a.__class__ is not Tensor and _is_wrapper(a):
        return False
    return tangent_of(a, lv) is None


def _make_untangented(op):
    """The fast path of an op that is not simple: when no argument carries a tangent (a view
    of a weight inside a jvp, a reduction of a constant) the op runs as without the mode, as
    the general mode would run it; otherwise the general mode runs."""
    lines = ["def untangented(args):",
             "    if _force[0] or not _enabled[0]:",
             "        return _NI",
             "    lv = _levels[-1]"]
    for i in op.tensor_idx:
        if i in op.list_idx:
            lines += [f"    if args[{i}] is not None:",
                      f"        for a in args[{i}]:",
                      "            if not _untangented(a, lv):",
                      "                return _NI"]
        else:
            lines += [f"    if not _untangented(args[{i}], lv):",
                      "        return _NI"]
    lines.append("    return _run_eager(_op, args)")
    ns = {"_NI": NotImplemented, "_levels": levels, "_force": force_general,
          "_enabled": _enabled, "_untangented": _untangented, "_run_eager": run_eager,
          "_op": op}
    return compile_function("untangented", lines, ns, f"{op.name} dual fast path")


def _make(op):
    """The op's generated fast path (NOTE [Dual fast path])."""
    kind = _kind_of(op)
    if not kind:
        return _make_untangented(op)
    idx = op.tensor_idx
    n = len(op.arg_names)
    lines = ["def dual(args):",
             "    if _force[0] or not _enabled[0]:",
             "        return _NI",
             f"    {''.join(f'a{i}, ' for i in range(n))}= args",
             "    lv = _levels[-1]",
             "    get = lv.tangents.get",
             "    grad_on = _state.grad_enabled",
             "    dt = None"]
    data = [f"a{i}" for i in range(n)]
    for i in idx:
        data[i] = f"d{i}"
        lines += [f"    if a{i}.__class__ is _T:",
                  f"        d{i} = a{i}._data",
                  "        if dt is None:",
                  f"            dt = d{i}.dtype",
                  f"        elif d{i}.dtype != dt:",
                  "            return _NI",
                  f"        if a{i}._requires_grad and grad_on:",
                  "            return _NI",
                  f"        e = get(id(a{i}))",
                  f"        if e is not None and e[0]() is a{i}:",
                  f"            t{i} = e[1]",
                  f"        elif a{i}._view is None:",
                  f"            t{i} = None",
                  "        else:",
                  f"            t{i} = _tangent_of(a{i}, lv)",
                  f"        if t{i} is not None and (t{i}.__class__ is not _T or "
                  f"t{i}._data.dtype != dt or t{i}._requires_grad and grad_on):",
                  "            return _NI"]
        if len(idx) > 1:  # a Python number in a tensor position (x * 0.9)
            lines += [f"    elif a{i}.__class__ is float or a{i}.__class__ is int:",
                      f"        d{i} = a{i}",
                      f"        t{i} = None"]
        lines += ["    else:", "        return _NI"]
    tans = [f"t{i}" for i in idx]
    lines += ["    if dt is None or dt.kind != 'f':",
              "        return _NI",
              *_kernel_call(op, data, "out"),
              "    if out.__class__ is not _nd:",
              "        out = _asarray(out)",
              *wrap_lines("out", "r")]
    diff = op.differentiable_outputs is None or op.differentiable_outputs[0]
    if not diff:
        lines.append("    return r")
    else:
        lines += [f"    if {' and '.join(t + ' is None' for t in tans)} or "
                  "out.dtype.kind != 'f':",
                  "        return r"]
        if kind == _LINEAR:
            call = list(data)
            absent = forward_ad.ABSENT_TERM.get(op.name)
            indent = "    "
            if absent is not None:
                lines += _one_term_lines(op)
                indent = "        "
            for k, i in enumerate(idx):
                call[i] = f"u{i}"
                zero, number = f"_zeros(d{i})", "0"
                if absent is not None:  # signed, as the general rule's (add, sub)
                    zero, number = f"_full(d{i}, {absent[k]!r})", repr(absent[k])
                lines.append(f"{indent}u{i} = (t{i}._data if t{i} is not None else {zero}) "
                             f"if a{i}.__class__ is _T else {number}")
            lines += _kernel_call(op, call, "tv", indent)
        elif kind == _BILINEAR:
            lines.append("    tv = None")
            for i in idx:
                call = list(data)
                call[i] = f"t{i}._data"
                lines += [f"    if t{i} is not None:",
                          *_kernel_call(op, call, "p", "        "),
                          "        tv = _sum(tv, p)"]
        else:
            lines += _elementwise_lines(op, data)
        lines += ["    if tv.__class__ is _nd and tv.shape == out.shape"
                  + (" and tv.dtype == out.dtype" if kind == _ELEMENTWISE else "") + ":",
                  *wrap_lines("tv", "rt", "        "),
                  "        _set(r, rt, lv)",
                  "        return r",
                  f"    return _finish(_op, args, ({''.join(t + ', ' for t in tans)}), r, tv, lv)"]
    ns = {**TENSOR_FIELDS.names, "_uf": getattr(op.forward, "ufunc", None),
          "_auf": getattr(op.forward, "alpha_ufunc", None), "_nd": _nd,
          "_asarray": np.asarray, "_NI": NotImplemented, "_levels": levels, "_state": state,
          "_force": force_general, "_enabled": _enabled,
          "_tangent_of": tangent_of, "_fwd": op.forward,
          "_zeros": np.zeros_like, "_full": np.full_like, "_neg": np.negative, "_sum": _sum,
          "_set": set_tangent, "_finish": _finish,
          "_op": op, "_data": _data, "_shape": _shape_of, "_dtype": _dtype_of,
          "_strides": _strides_of}
    for k, f in enumerate(op.array_formulas or ()):
        ns[f"_f{k}"] = f.fn
    return compile_function("dual", lines, ns, f"{op.name} dual fast path")


def _kernel_call(op, args: list, target: str, indent: str = "    ") -> list:
    """`target = op.forward(*args)`; for a binary ufunc's forward given row-major arrays or a
    Python number, the ufunc itself, which is what that forward calls for them (NOTE [Direct
    ufunc])."""
    plain = [indent + f"{target} = _fwd({', '.join(args)})"]
    if len(op.tensor_idx) != 2:
        return plain
    if getattr(op.forward, "ufunc", None) is not None and len(args) == 2:
        uf, ok = "_uf", ""
    elif getattr(op.forward, "alpha_ufunc", None) is not None and len(args) == 3:
        # add / sub: with alpha 1 the forward computes the ufunc of the two operands
        uf, ok = "_auf", f"{args[2]} == 1 and {args[2]} is not True and "
    else:
        return plain
    ok += " and ".join(f"({a}.__class__ is _nd and {a}.flags.c_contiguous or {a}.__class__ is "
                       f"float or {a}.__class__ is int)" for a in args[:2])
    return [indent + f"if {ok}:",
            indent + "    try:",
            indent + f"        {target} = {uf}({', '.join(args[:2])})",
            indent + "    except ValueError:",
            indent + f"        {target} = _fwd({', '.join(args)})",
            indent + "else:",
            "    " + plain[0]]


def _one_term_lines(op) -> list:
    """add / sub with alpha 1 where one operand has a tangent of the result's shape: that
    tangent copied (negated for sub's `other`), what the general rule's sum with the signed
    zero of ABSENT_TERM gives bit for bit, without a pass of arithmetic (x + 1, x - y)."""
    other = "_neg(t1._data)" if op.name.startswith("sub") else "t1._data.copy(order='K')"
    return ["    if a2 == 1 and a2 is not True and (t0 is None or t1 is None) and "
            "(t0 if t1 is None else t1)._data.shape == out.shape:",
            "        tv = t0._data.copy(order='K') if t1 is None else " + other,
            "    else:"]


def _elementwise_lines(op, data: list) -> list:
    """tv: the sum over inputs with a tangent of the input's array formula on it."""
    out = ["    tv = None"]
    for k, f in enumerate(op.array_formulas):
        for pos, inp in enumerate(f.inputs):
            i = op.tensor_idx[inp]
            values = []
            for p in f.params:
                where, j = _getter(op, p)
                values.append({"grad": f"t{i}._data", "grads": f"(t{i}._data,)",
                               "mask": repr(tuple(True for _ in op.tensor_idx)),
                               "arg": data[j] if where == "arg" else "",
                               "result": "out", "shape": f"_shape(a{j})",
                               "dtype": f"_dtype(a{j})", "strides": f"_strides(a{j})"}[where])
            part = f"_f{k}({', '.join(values)})" + (f"[{pos}]" if f.joint else "")
            out += [f"    if t{i} is not None:",
                    f"        p = {part}",
                    "        if p is not None:",
                    f"            tv = (t{i} if p is t{i}._data else p) if tv is None "
                    "else _sum(_data(tv), p)"]
    return out


def _finish(op, args: tuple, tangents: tuple, result: Tensor, tv, lv) -> Tensor:
    """The uncommon endings: no contribution, the input's tangent passed on, a 0-d NumPy
    scalar, or a contribution the general rule must redo."""
    if tv is None:
        return result
    if isinstance(tv, np.generic):  # a 0-d result, as the runner wraps it
        tv = np.asarray(tv)
    out = result._data
    if tv.__class__ is Tensor and tv._data.shape == out.shape:
        tangent = tv  # the input's tangent passed on (`lambda grad: grad`)
    elif tv.__class__ is _nd and tv.shape == out.shape and (
            _kinds_of(op) != _ELEMENTWISE or tv.dtype == out.dtype):
        tangent = _wrap(tv)
    else:
        tans = {i: t for i, t in zip(op.tensor_idx, tangents) if t is not None}
        tangent = _general(op, args, tans, result)
    if tangent is not None:
        set_tangent(result, tangent, lv)
    return result


def _kinds_of(op) -> int:
    kind = _kinds.get(op)
    if kind is None:
        kind = _kinds[op] = _kind_of(op)
    return kind


def _general(op, args: tuple, tans: dict, result: Tensor):
    """The general rule's tangent for this call, on Tensors (NOTE [Forward-mode derivatives])."""
    with forward_ad.suspended():
        t = forward_ad.output_tangents(op, args, tans, (result,))[0]
        return None if t is None else forward_ad._like(result, t)


def _sum(total, part):
    """total + part as the general rule adds contributions (add.Tensor's kernel)."""
    if total is None:
        return part
    from retrograd._ops.registry import OPS

    return OPS["add.Tensor"].forward(total, part, 1)


def _data(x):
    return x._data if x.__class__ is Tensor else x


def install() -> None:
    dispatch.dual_fast[0] = forward_ad._MODE
    dispatch.dual_fast[1] = _fns
