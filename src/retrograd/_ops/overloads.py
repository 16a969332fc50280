"""Public functions with several overloads (pow, clamp, sum, ...): their dispatcher is generated
from the overloads' schemas.

NOTE [Overloads]
Several declarations may expose one public name: `pow.Tensor_Scalar`, `pow.Tensor_Tensor` and
`pow.Scalar` all become `retrograd.pow` and `Tensor.pow`. Each declaration keeps its own entry
point (what `op()` returns) and its own node class; the public function is generated from the
schemas, once every overload is declared (registry.finish, or `overloaded(name)` for code that
needs it earlier), through compile_function, so its source is visible like any generated code.

- Signature: the overloads' arguments merged by position (keyword-only ones by name); an
  argument that some overload lacks, or whose default differs, defaults to _UNSET, so that
  giving it explicitly selects the overloads that have it (`div(a, b, rounding_mode=None)` is
  div.Tensor_mode, `sum(x, dim)` is sum.dim_IntList, as in torch).
- Selection: the overloads are tried in declaration order. A Tensor argument matches a Tensor,
  a Scalar argument a Python or NumPy number; arguments of other types are checked only where
  they tell overloads apart (int against int[]). When nothing matches, a second pass accepts
  what torch converts (a number where a Tensor goes, a Tensor where a Number goes); when that
  fails too, the error is torch's "received an invalid combination of arguments", with each
  overload's signature.
- Node names: declarations of one name are numbered in declaration order, as torch numbers the
  entries of derivatives.yaml (PowBackward0, PowBackward1, PowBackward2), so overloads are
  declared in torch's order; `node=` names an op where torch's numbering skips an overload
  retrograd does not declare (div.Tensor_mode is DivBackward2).
- Composite overloads: an overload torch implements by calling another (var(unbiased) is
  var.correction, where.Scalar is where.self) joins the group with `composite(schema, fn)`: a
  schema and the function it runs, no node of its own.
- Types told apart at one position: Tensor from Scalar or float, bool from int (a bool is no
  int here, as in torch's parser), int from int[] (`split(x, 2)` against `split(x, [1, 3])`)
  and str from int[] (conv2d's padding); a Generator and a dtype are checked too.
- Python bindings: a factory's schema (its TensorOptions: dtype, layout, device, pin_memory)
  takes what torch's binding takes: those with the binding's defaults, requires_grad, and out=
  listed just before them (python_args).
- Bound dispatchers: a name in BIND_EACH (conv1d/2d/3d, normal, randint, bernoulli) gets
  make_binding_dispatcher instead: it binds the call to each overload by that overload's own
  names and positions and tests every argument, as torch's parser does. One merged signature
  cannot hold randint(high, size) beside randint(low, high, size), and these overloads leave
  the checks of a Generator, a str padding or an unsized int list to the parser. Its errors
  are torch's for the call as given; its stubs are one @overload per overload.
- Errors: when the number of arguments fits one overload alone, torch says what is wrong for
  that one ("argument 'high' (position 1) must be int, not float", "missing 1 required
  positional arguments"); otherwise it lists them all.
- ops.aten shows the composite overloads beside the declared ops (ops.aten.conv2d.padding),
  and calling one runs its function.
- Named returns: an overload with several named returns gives RETURN_TYPES[name]; given
  `out=` (a tuple of tensors) it writes them there and gives RETURN_TYPES[name + "_out"].
A public name with one declaration gets no dispatcher, unless it has such named returns: its
entry point is the public function.
"""

from __future__ import annotations

import copy
import dataclasses
import numbers
from collections.abc import Callable

import numpy as np

from retrograd import _errors as E
from retrograd._numpy_names import has_numpy_names, hide_numpy_names, numpy_names_signature
from retrograd._ops.arg_check import type_name
from retrograd._ops.codegen import compile_function
from retrograd._tensor import Tensor


class _Unset:
    """The default of an argument not every overload has: giving it selects an overload."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()
_NUMBERS = frozenset({int, float, bool, complex})
_NOT_TENSORS = _NUMBERS | {type(None)}  # classes that need no isinstance test


class Group:
    """The declarations exposed under one public name, as a function or as a method."""

    __slots__ = ("name", "method", "entries", "fn", "pending")

    def __init__(self, name: str, method: bool) -> None:
        self.name = name
        self.method = method
        self.entries: list = []  # (opdef, entry function), in declaration order
        self.fn: Callable | None = None
        self.pending: Callable | None = None


GROUPS: dict = {}  # (is_method, public name) -> Group
# public names whose dispatcher binds the call to each overload in turn, as torch's parser does
# (make_binding_dispatcher)
BIND_EACH: set = set()
# public name -> the named-tuple class (retrograd.return_types.<name>) its overloads with named
# returns give
RETURN_TYPES: dict = {}


def expose(table: dict, name: str, fn: Callable, opdef, method: bool) -> None:
    """Put a declared op's entry point in `table` under `name`, joining the group of overloads
    already there."""
    key = (method, name)
    group = GROUPS.get(key)
    if group is None:
        if name in table:
            raise ValueError(f"{name} is exposed twice (a hand-written function and an op)")
        group = GROUPS[key] = Group(name, method)
    elif group.fn is not None:
        raise ValueError(f"overload {opdef.name} declared after {name}'s dispatcher was made")
    group.entries.append((opdef, fn))
    if len(group.entries) == 1:
        table[name] = fn
    else:
        if group.pending is None:
            group.pending = _pending(group)
        table[name] = group.pending


def _pending(group: Group) -> Callable:
    """A stand-in until the dispatcher is made (generating it now would freeze the group)."""
    def pending(*args, **kwargs):
        return overloaded(group.name, group.method)(*args, **kwargs)

    pending.__name__ = group.name
    return pending


def expose_as(name: str, schema: str, source: str) -> None:
    """Expose the declared op `source` (function and method) also as an overload of `name`,
    under that overload's schema (torch's max.other is maximum): its node stays its own."""
    from retrograd._ops.registry import _METHODS, _NAMESPACE
    from retrograd._ops.schema import parse_schema

    parsed = parse_schema(schema)
    for method, table in ((False, _NAMESPACE), (True, _METHODS)):
        group = GROUPS.get((method, source))
        if group is None:
            continue
        opdef, entry = group.entries[0]
        opdef = copy.copy(opdef)
        opdef.schema = parsed
        expose(table, name, entry, opdef, method)


# a factory's keyword arguments (torch's TensorOptions) with the defaults its Python binding gives
# them: the binding also takes requires_grad, and lists out= just before them
_FACTORY_DEFAULTS = {"dtype": None, "layout": None, "device": None, "pin_memory": False}


def python_args(schema) -> tuple:
    """The arguments torch's Python binding of `schema` takes: the schema's own, except that a
    factory's TensorOptions take the binding's defaults and requires_grad joins them."""
    args = schema.args
    kw = {a.name for a in args if a.kwarg_only}
    if not set(_FACTORY_DEFAULTS) <= kw:
        return args
    from retrograd._ops.schema import Arg

    fixed = tuple(dataclasses.replace(a, default=_FACTORY_DEFAULTS[a.name], has_default=True)
                  if a.kwarg_only and a.name in _FACTORY_DEFAULTS else a for a in args)
    return fixed + (Arg("requires_grad", "bool", False, True, True),)


def _args(opdef) -> tuple:
    """An overload's arguments as its Python binding takes them (NOTE [Overloads])."""
    return getattr(opdef, "python_args", None) or opdef.schema.args


# composite overloads by full name (conv2d.padding): ops.aten shows them beside the declared ops
COMPOSITES: dict = {}


class CompositeDef:
    """A composite overload's declaration: a schema, run by a function of other ops (torch's
    CompositeImplicit overloads), so no node and no formulas of its own."""

    formulas: tuple = ()
    node_name = None
    promote = None
    inplace_idx: tuple = ()

    def __init__(self, schema) -> None:
        self.schema = schema
        self.name = schema.full_name
        self.arg_names = tuple(a.name for a in schema.args)
        self.tensor_idx = tuple(i for i, a in enumerate(schema.args) if a.is_tensor)
        self.python_args = python_args(schema)


def composite(schema: str, fn: Callable, *, function: bool = True, method: bool = True) -> None:
    """Add a composite overload to the public name of `schema`: `fn` takes the schema's
    arguments (keyword-only ones by keyword) and calls the ops that implement it."""
    from retrograd._ops.registry import _METHODS, _NAMESPACE
    from retrograd._ops.schema import parse_schema

    parsed = parse_schema(schema)
    opdef = CompositeDef(parsed)
    fn.opdef = opdef  # type: ignore[attr-defined]
    COMPOSITES[opdef.name] = fn
    if function:
        expose(_NAMESPACE, parsed.name, fn, opdef, False)
    if method:
        expose(_METHODS, parsed.name, fn, opdef, True)


def _named_returns(group: Group) -> bool:
    """Whether some overload gives RETURN_TYPES[name] (then even one overload needs the
    generated function, which wraps its results)."""
    return group.name in RETURN_TYPES and any(
        len(opdef.schema.returns) > 1 for opdef, _ in group.entries)


def overloaded(name: str, method: bool = False) -> Callable:
    """The public function (or method) of `name`: its dispatcher when it has several overloads
    or named returns, made now if it was not yet."""
    group = GROUPS[(method, name)]
    if len(group.entries) == 1 and not _named_returns(group):
        return group.entries[0][1]
    if group.fn is None:
        group.fn = (make_binding_dispatcher if name in BIND_EACH else make_dispatcher)(group)
    return group.fn


def finish(namespace: dict, methods: dict) -> None:
    """Make every dispatcher not made yet and put it in its table."""
    for (method, name), group in GROUPS.items():
        table = methods if method else namespace
        current = table.get(name)
        if group.pending is not None and current is group.pending or (
                group.fn is None and current is group.entries[0][1]
                and _named_returns(group)):
            table[name] = overloaded(name, method)


# --- the generated dispatcher -------------------------------------------------------------------

class _Param:
    """One argument of the dispatcher, merged over the overloads."""

    __slots__ = ("name", "kwarg_only", "required", "default", "per_overload", "aliases",
                 "alias_at")

    def __init__(self, name: str, kwarg_only: bool) -> None:
        self.name = name
        self.kwarg_only = kwarg_only
        self.required = False
        self.default: object = _UNSET
        self.per_overload: dict = {}  # overload index -> schema Arg
        # a position that overloads name differently (max's `other` and `dim`): overload
        # index -> its name, for the overloads whose name is not this one's
        self.aliases: dict = {}
        # overload index -> the position whose value this name stands for when given by
        # keyword: every overload of a keyword-only twin (max's `other`), some of a positional
        # argument whose name another overload has at an earlier position (var's `unbiased`)
        self.alias_at: dict = {}


def _params(group: Group) -> list:
    """The dispatcher's arguments: positional ones merged by position, keyword-only by name."""
    first = "self" if group.method else "input"
    positional: list = []
    keyword: dict = {}
    aliases: dict = {}
    for k, (opdef, _) in enumerate(group.entries):
        pos = 0
        for i, a in enumerate(_args(opdef)):
            if a.kwarg_only:
                p = keyword.get(a.name)
                if p is None:
                    p = keyword[a.name] = _Param(a.name, True)
            else:
                # torch calls a Tensor `self` "input" (where's condition and isin's elements
                # keep their names; a Number `self` after the first keeps its own)
                name = first if i == 0 and (group.method or a.name == "self") \
                    else ("input" if a.name == "self" and a.is_tensor else a.name)
                if pos == len(positional):
                    positional.append(_Param(name, False))
                p = positional[pos]
                if p.name != name:
                    # given by position it fills the slot, by keyword its own name
                    p.aliases[k] = name
                    twin = aliases.get(name)
                    if twin is None:
                        twin = aliases[name] = _Param(name, True)
                    twin.per_overload[k] = a
                    twin.alias_at[k] = p
                pos += 1
            p.per_overload[k] = a
    for p in positional:  # rsub: alpha is positional in one overload, keyword-only in another
        if p.name in keyword:
            p.per_overload.update(keyword.pop(p.name).per_overload)
        twin = aliases.get(p.name)
        if twin is not None:  # the twin's name is a later position's: that argument is it
            del aliases[p.name]
            p.per_overload.update(twin.per_overload)
            p.alias_at.update(twin.alias_at)
    params = positional + list(keyword.values()) + list(aliases.values())
    n = len(group.entries)
    defaulted = False  # a positional argument with a default: later ones need one too
    for p in params:
        if p.aliases or p.alias_at:
            if not p.kwarg_only:
                defaulted = True
            continue  # _U: which name was given selects the overloads
        args = list(p.per_overload.values())
        everywhere = len(args) == n
        if everywhere and not any(a.has_default for a in args) and (p.kwarg_only or not defaulted):
            p.required = True
            continue
        if everywhere and all(a.has_default and a.default == args[0].default for a in args):
            p.default = args[0].default
            if p.name == "reduction" and p.default == 1 and args[0].type == "int":
                p.default = 0  # NOTE [Binding reduction default]
        if not p.kwarg_only:
            defaulted = True
    return params


def _takes_out(fn: Callable) -> bool:
    code = fn.__code__
    names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    return "out" in names


def _kind(arg) -> str:
    """The type an argument's value is tested against: an int list declared without a size
    (`int[]`) is "ints", which takes no bare int (`int[1]` does)."""
    if arg.unsized and arg.type in ("int[]", "int[]?"):
        return arg.type.replace("int[]", "ints")
    return arg.type


# per base type (without "?"): the strict test that a value `{v}` fits it, and a test by exact
# class that implies the strict one (a Tensor, a Python number) or None where there is none
_TESTS = {
    "Tensor": ("{v}.__class__ is _T or isinstance({v}, _T)", "{v}.__class__ is _T"),
    "Scalar": ("{v}.__class__ in _NUM or {v}.__class__ is not _T and _is_number({v})",
               "{v}.__class__ in _NUM"),
    "int": ("{v}.__class__ is int or _is_int({v})", "{v}.__class__ is int"),
    "bool": ("{v}.__class__ is bool or {v}.__class__ is _np_bool", "{v}.__class__ is bool"),
    "int[]": ("_is_int_list({v})", None),
    "ints": ("_is_int_seq({v})", None),
    "float": ("{v}.__class__ is float or {v}.__class__ is int or _is_real({v})",
              "({v}.__class__ is float or {v}.__class__ is int)"),
    "str": ("isinstance({v}, str)", "{v}.__class__ is str"),
    "Generator": ("isinstance({v}, _Gen)", "{v}.__class__ is _Gen"),
    "ScalarType": ("isinstance({v}, _DT)", "{v}.__class__ is _DT"),
}


def _check(kind: str, v: str) -> str | None:
    """Strict test that value `v` fits a schema type (None: not checked)."""
    tests = _TESTS.get(kind.rstrip("?"))
    if tests is None:
        return None
    test = tests[0].format(v=v)
    return f"({v} is None or {test})" if kind.endswith("?") else f"({test})"


def _fast(kind: str, v: str) -> str | None:
    """A test by exact class that implies _check (a Tensor, a Python number), for the fast
    branches at the top of a dispatcher; None when the type has no such test."""
    tests = _TESTS.get(kind.rstrip("?"))
    if tests is None or tests[1] is None:
        return None
    test = tests[1].format(v=v)
    return f"({v} is None or {test})" if kind.endswith("?") else test


def _flag_test(kind: str, v: str) -> str | None:
    """_check for an argument whose Tensor test is in local _t_<name> already."""
    base = kind.rstrip("?")
    if base == "Tensor":
        test = f"_t_{v}"
    elif base == "Scalar":
        test = f"({v}.__class__ in _NUM or not _t_{v} and _is_number({v}))"
    else:
        return _check(kind, v)
    return f"({v} is None or {test})" if kind.endswith("?") else test


def _loose(kind: str, v: str) -> str | None:
    """The second pass, torch's conversion: a 0-d tensor that needs no gradient stands for a
    Number or a float (an integral one for an int), and an array for a Tensor, as retrograd's
    own code passes them."""
    base = kind.rstrip("?")
    if base == "Scalar":
        test = f"_scalar_tensor({v})"
    elif base == "float":
        test = f"_real_tensor({v})"
    elif base == "int":
        test = f"_int_tensor({v})"
    elif base == "Tensor":
        test = f"({v}.__class__ is _nd or isinstance({v}, _T))"
    else:
        return _check(kind, v)
    return f"({v} is None or {test})" if kind.endswith("?") else test


def _discriminating(params: list) -> set:
    """The arguments whose type tells overloads apart (Tensor or Scalar, int or int[]): only
    these are tested; the others are the entry point's to check."""
    return {p.name for p in params
            if len({a.type.rstrip("?") for a in p.per_overload.values()}) > 1}


def _disjoint(params: list, i: int, j: int) -> bool:
    """Whether no call fits both overload i and j: one takes a Tensor where the other takes a
    Number, or one requires an argument the other lacks."""
    for p in params:
        a, b = p.per_overload.get(i), p.per_overload.get(j)
        if a is None or b is None:
            if (a or b) is not None and not (a or b).has_default:
                return True
        elif {a.type, b.type} == {"Tensor", "Scalar"}:
            return True
    return False


def make_dispatcher(group: Group) -> Callable:
    entries = group.entries
    params = _params(group)
    takes_out = [not group.method and _takes_out(fn) and opdef.name not in _REFUSES_OUT
                 for opdef, fn in entries]
    # overloads with named returns whose out= the dispatcher handles (sort, topk, ...)
    out_type = None if group.method else RETURN_TYPES.get(group.name + "_out")
    named_out = [out_type is not None and not takes_out[k] and len(opdef.schema.returns) > 1
                 for k, (opdef, _) in enumerate(entries)]
    has_out = any(takes_out) or any(named_out)
    checked = _discriminating(params)
    ns: dict = {**_test_names(), "_scalar_tensor": _scalar_tensor,
                "_real_tensor": _real_tensor, "_int_tensor": _int_tensor,
                "_store_outs": _store_outs,
                "_nd": np.ndarray, "_U": _UNSET, "_PLAIN": _NOT_TENSORS,
                "_invalid": _invalid, "_group": group, "_ro": out_type,
                "__name__": "retrograd._ops.overloads"}
    sig: list = []
    kw_started = False
    for j, p in enumerate(params):
        if p.kwarg_only and not kw_started:
            sig.append("*")
            kw_started = True
        if p.required:
            sig.append(p.name)
        else:
            ns[f"_p{j}"] = p.default
            sig.append(f"{p.name}=_p{j}")
    if has_out:
        sig += ["out=None"] if kw_started else ["*", "out=None"]
    guard: list = []
    if has_numpy_names([p.name for p in params]):  # NOTE [NumPy argument names]
        sig, guard = numpy_names_signature(sig, ns, group.name,
                                           ("Tensor." if group.method else "") + group.name)
    lines = [f"def {group.name}({', '.join(sig)}):", *guard]
    # overloads that no call can match twice are tried in declaration order (the hot one is
    # usually first); otherwise in torch's order, which decides between them
    disjoint = all(_disjoint(params, i, j) for i in range(len(entries)) for j in range(i))
    order = list(range(len(entries))) if disjoint else torch_order(group, exact=False)
    # the second pass differs from the first only for Tensor, Scalar, float and int arguments
    convertible = any(a.type.rstrip("?") in ("Tensor", "Scalar", "float", "int")
                      for p in params if p.name in checked for a in p.per_overload.values())
    # whether each Tensor-or-Scalar argument is a Tensor, tested once (a number skips the
    # isinstance call)
    flagged = {p.name for p in params if p.name in checked and not p.aliases
               and {a.type.rstrip("?") for a in p.per_overload.values()} & {"Tensor", "Scalar"}}
    body: list = []
    defined: set = set()  # the _x_<name> locals made so far (just before their first use)
    for p in params:
        if p.name in flagged:
            v = p.name
            body.append(f"    _t_{v} = {v}.__class__ is _T or ({v}.__class__ not in _PLAIN and "
                        f"isinstance({v}, _T))")
    # fast branches first: the leading overloads tested by exact class (a Tensor, a Python
    # number), which skips the flags above for the common calls; each test implies the strict
    # one, and they keep the order, so they select what the strict pass would
    fast = flagged or any(p.aliases for p in params if p.name in checked)
    passes = (["fast"] if fast else []) + ["strict"] + (["loose"] if convertible else [])
    for mode in passes:
        for k in order:
            opdef, fn = entries[k]
            ns[f"_f{k}"] = fn
            conds: list = []
            fast_ok = True
            for p in params:
                a = p.per_overload.get(k)
                if k in p.alias_at:
                    continue  # the value is tested at its position
                may_be_unset = not p.required and isinstance(p.default, _Unset)
                if a is None:
                    conds.append(f"{p.name} is _U")
                    continue
                v = p.name
                if k in p.aliases and mode == "fast":
                    # the fast branch takes the value by position only
                    conds.append(f"{p.aliases[k]} is _U")
                elif k in p.aliases:
                    v = f"_x_{p.aliases[k]}"
                    conds.append(f"({p.name} is _U or {p.aliases[k]} is _U)")
                if may_be_unset and not a.has_default:
                    conds.append(f"{v} is not _U")
                if p.name not in checked:
                    continue  # same type in every overload: the entry point checks it
                if mode == "fast":
                    test = _fast(_kind(a), v)
                    if test is None:
                        fast_ok = False
                        break
                elif mode == "loose":
                    test = _loose(_kind(a), v)
                elif p.name in flagged:
                    test = _flag_test(_kind(a), v)
                else:
                    test = _check(_kind(a), v)
                if test is None:
                    continue
                if may_be_unset and a.has_default:
                    test = f"({v} is _U or {test})"
                conds.append(test)
            if not fast_ok:
                break  # no fast test for this overload: the later ones must wait for it
            if has_out and mode == "fast":
                conds.append("out is None")
            elif has_out and not takes_out[k] and not named_out[k]:
                conds.insert(0, "out is None")
            call_args = []
            for j, p in enumerate(params):
                a = p.per_overload.get(k)
                if a is None or k in p.alias_at:
                    continue
                value = f"_x_{p.aliases[k]}" if k in p.aliases and mode != "fast" else p.name
                if isinstance(p.default, _Unset) and a.has_default:
                    ns[f"_d{k}_{j}"] = a.default
                    value = f"(_d{k}_{j} if {value} is _U else {value})"
                call_args.append(f"{a.name}={value}" if a.kwarg_only else value)
            call = raw_call = f"_f{k}({', '.join(call_args)})"
            rtype = RETURN_TYPES.get(group.name) if len(opdef.schema.returns) > 1 and all(
                r.name for r in opdef.schema.returns) else None
            if rtype is not None:  # a named tuple: retrograd.return_types.<name>
                ns[f"_r{k}"] = rtype
                call = f"_r{k}({call})"
            out = lines if mode == "fast" else body
            for p in params:
                alt = p.aliases.get(k)
                if alt is not None and alt not in defined and mode != "fast":
                    defined.add(alt)
                    out.append(f"    _x_{alt} = {p.name} if {alt} is _U else {alt}")
            out.append(f"    if {' and '.join(conds) or 'True'}:")
            if named_out[k] and mode != "fast":
                tensors = "".join(
                    f"{'_x_' + p.aliases[k] if k in p.aliases else p.name}, "
                    for p in params if k not in p.alias_at and p.per_overload.get(k) is not None
                    and p.per_overload[k].is_tensor)
                n_out = len(opdef.schema.returns)
                out += ["        if out is None:", f"            return {call}",
                        f"        return _ro(_store_outs({group.name!r}, lambda: {raw_call}, "
                        f"out, ({tensors}), {n_out}))"]
            elif takes_out[k] and mode != "fast":
                with_out = f"_f{k}({', '.join(call_args + ['out=out'])})"
                if rtype is not None:
                    with_out = f"_r{k}({with_out})"
                out += ["        if out is None:", f"            return {call}",
                        f"        return {with_out}"]
            else:
                out.append(f"        return {call}")
    lines += body
    ns["_params"] = params
    values = "".join(f"{p.name}, " for p in params) + ("out, " if has_out else "")
    lines.append(f"    raise _invalid(_group, _params, ({values}))")
    kind = "method dispatcher" if group.method else "dispatcher"
    fn = compile_function(group.name, lines, ns, f"{group.name} {kind}",
                          ("Tensor." if group.method else "") + group.name)
    fn.__module__ = "retrograd"
    fn.overloads = {  # type: ignore[attr-defined]
        opdef.schema.overload or "default": entry for opdef, entry in entries}
    from retrograd._ops.op_doc import op_doc

    fn.__doc__ = "\n\n".join(op_doc(opdef) for opdef, _ in entries)
    return hide_numpy_names(fn) if guard else fn


_nd = np.ndarray


def make_binding_dispatcher(group: Group) -> Callable:
    """The dispatcher of a group whose call torch's parser checks in full: each overload, in
    torch's order, binds the arguments by its own names and positions and tests every one's
    type (a second pass takes what torch converts: a 0-d tensor for a number); the first that
    takes them all runs. One signature cannot hold randint(high, size) and randint(low, high,
    size) (a name at two positions), and the checks the entry points leave to the parser (a
    Generator, a str padding, an unsized int list) happen here; the errors are torch's for the
    call as given, keywords and all."""
    options = []
    for k in torch_order(group):
        opdef, fn = group.entries[k]
        takes_out = not group.method and _takes_out(fn) and opdef.name not in _REFUSES_OUT
        binding = _binding_args(opdef, group.method, False)
        tests = [(_tester(_check(_kind(a), "v")) or _bound_test(a.type, i),
                  _tester(_loose(_kind(a), "v")) or _bound_test(a.type, i))
                 for i, a in enumerate(binding)]
        options.append((binding, tests, takes_out, k))
    method = group.method
    n_options = len(options)

    def bind(binding: list, tests: list, takes_out: bool, args: tuple, kwargs: dict,
             loose: int) -> tuple | None:
        """(positional values, keyword values) for the overload, or None if it does not take
        the call."""
        n_args = len(args)
        n_kwargs = len(kwargs)
        if "out" in kwargs:
            if not takes_out:
                return None
            n_kwargs -= 1
        positional: list = []
        keywords: dict = {}
        used = 0
        for i, a in enumerate(binding):
            if i < n_args:
                if a.kwarg_only:
                    return None  # more positional arguments than the overload takes
                v = args[i]
            else:
                name = "input" if a.name == "self" and a.is_tensor else a.name
                if name in kwargs:
                    v = kwargs[name]
                    used += 1
                elif a.has_default:
                    if not a.kwarg_only:
                        positional.append(a.default)
                    continue
                else:
                    return None
            if not (v is None and _takes_none(a)):
                test = tests[i][loose]
                if test is not None and not test(v):
                    return None
                if loose and v.__class__ is not _nd and isinstance(v, Tensor) and not a.is_tensor:
                    v = v.item()  # a 0-d tensor where a number goes: its value, as torch
            if a.kwarg_only:
                keywords[a.name] = v
            else:
                positional.append(v)
        if used != n_kwargs or n_args > len(positional):
            return None
        if takes_out and kwargs.get("out") is not None:
            keywords["out"] = kwargs["out"]
        return positional, keywords

    def dispatcher(*args, **kwargs):
        given = args[1:] if method else args
        for loose in (0, 1):
            for j in range(n_options):
                binding, tests, takes_out, k = options[j]
                bound = bind(binding, tests, takes_out, given, kwargs, loose)
                if bound is not None:
                    fn = group.entries[k][1]  # read at each call: a test may spy on it
                    if method:
                        return fn(args[0], *bound[0], **bound[1])
                    return fn(*bound[0], **bound[1])
        raise _invalid_call(group, list(given), dict(sorted(kwargs.items())))

    dispatcher.__name__ = dispatcher.__qualname__ = group.name
    dispatcher.__module__ = "retrograd"
    # each overload's binding, out= included where it takes one (the stubs' @overload forms)
    dispatcher.bindings = [  # type: ignore[attr-defined]
        (group.entries[k][0], _binding_args(group.entries[k][0], method, options[j][2]))
        for j, k in enumerate(torch_order(group))]
    dispatcher.overloads = {  # type: ignore[attr-defined]
        opdef.schema.overload or "default": entry for opdef, entry in group.entries}
    from retrograd._ops.op_doc import op_doc

    dispatcher.__doc__ = "\n\n".join(op_doc(opdef) for opdef, _ in group.entries)
    return dispatcher


def _bound_test(kind: str, position: int) -> Callable | None:
    """A bound dispatcher's test of a list type _check leaves to the entry points: a float[]
    takes a list or tuple of real numbers; a Tensor[] a list or tuple, whose elements must then
    be Tensors (torch's parser raises at the first that is not)."""
    base = kind.rstrip("?")
    if base == "float[]":
        def test(v) -> bool:
            return isinstance(v, (list, tuple)) and all(
                _is_real(x) or isinstance(x, Tensor) and x.ndim == 0 for x in v)
    elif base == "Tensor[]":
        def test(v) -> bool:
            if not isinstance(v, (list, tuple)):
                return False
            for i, x in enumerate(v):
                if not isinstance(x, Tensor):
                    raise TypeError(f"expected Tensor as element {i} in argument {position}, "
                                    f"but got {type(x).__name__}")
            return True
    else:
        return None
    if kind.endswith("?"):
        return lambda v: v is None or test(v)
    return test


def _tester(test: str | None) -> Callable | None:
    """A function of `v` from a test _check (or _loose) writes."""
    if test is None:
        return None
    names = {**_test_names(), "_scalar_tensor": _scalar_tensor, "_real_tensor": _real_tensor,
             "_int_tensor": _int_tensor, "_nd": np.ndarray}
    return eval(f"lambda v: {test}", names)  # noqa: S307 - our own generated text


def _store_outs(name: str, compute: Callable, out, args: tuple, n: int) -> tuple:
    from retrograd._ops.out_variant import store_outs

    return store_outs(name, compute, out, args, n)


def _is_number(v) -> bool:
    return isinstance(v, (numbers.Number, np.bool_)) and not isinstance(v, Tensor)


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _is_int_seq(v) -> bool:
    if v.__class__ is list or v.__class__ is tuple:  # the common case, without isinstance
        for x in v:
            if x.__class__ is not int and not (_is_int(x) or isinstance(x, Tensor)
                                                and x.ndim == 0):
                return False
        return True
    return isinstance(v, (list, tuple)) and _is_int_list(v)


def _is_int_list(v) -> bool:
    if isinstance(v, (list, tuple)):
        return all(_is_int(x) or isinstance(x, Tensor) and x.ndim == 0 for x in v)
    return _is_int(v)  # int[1]: one int stands for a list of one


def _is_real(v) -> bool:
    return isinstance(v, (numbers.Real, np.bool_)) and not isinstance(v, Tensor)


def _real_tensor(v) -> bool:
    if isinstance(v, Tensor):
        return v.ndim == 0 and not v.requires_grad
    return _is_real(v)


def _int_tensor(v) -> bool:
    if isinstance(v, Tensor):
        return v.ndim == 0 and not v.requires_grad and v._data.dtype.kind in "iu"
    return _is_int(v)


def _scalar_tensor(v) -> bool:
    if isinstance(v, Tensor):
        return v.ndim == 0 and not v.requires_grad
    return _is_number(v)


def _arg_smaller(t1: str, t2: str, exact: bool) -> bool:
    """torch's priority between two argument types: Scalar after Tensor, int[] after int (and,
    unless `exact`, int[]? after int: retrograd's int[] also takes a bare int, so the int
    overload must be tried first where torch needs no such order)."""
    return (t1 == "Scalar" and t2 == "Tensor" or t1 == "Scalar?" and t2 == "Tensor?"
            or (t1 == "int[]" or not exact and t1 == "int[]?") and t2 in ("int", "int?")
            or t1 == "Tensor[]" and "[]" in t2 or t1 == "int" and t2 == "Tensor")


# the argument types as torch's signature text spells them (its order sorts this text)
_SORT_TYPES = {"int[]": "IntArrayRef", "int": "int64_t", "float": "double",
               "str": "c10::string_view", "Tensor[]": "TensorList"}


def _sort_default(value) -> str:
    if isinstance(value, tuple):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)


def _sort_key(args) -> str:
    parts: list = []
    for a in args:
        if a.kwarg_only and "*" not in parts:
            parts.append("*")
        base = a.type.rstrip("?")
        default = f"={_sort_default(a.default)}" if a.has_default else ""
        parts.append(f"{_SORT_TYPES.get(base, base)}{'?' if a.type.endswith('?') else ''} "
                     f"{a.name}{default}")
    return ", ".join(parts)


def torch_order(group: Group, exact: bool = True) -> list:
    """The overloads' indices in the order torch's argument parser tries (and lists) them:
    sorted by signature text, then any overload that is a narrower form of another (a Scalar
    where the other has a Tensor) after it."""
    entries = group.entries
    keys = [_sort_key(_args(opdef)[group.method:]) for opdef, _ in entries]
    ids = sorted(range(len(entries)), key=lambda i: keys[i])
    types = {i: [a.type for a in _args(entries[i][0])[group.method:]] for i in ids}

    def smaller(i: int, j: int) -> bool:
        a, b = types[i], types[j]
        return (len(a) == len(b) and a != b
                and all(x == y or _arg_smaller(x, y, exact) for x, y in zip(a, b)))

    larger = {i: {j for j in ids if smaller(i, j)} for i in ids}
    larger = {i: js for i, js in larger.items() if js}
    order = [i for i in ids if i not in larger]
    pos = 0
    while pos < len(order):
        done = order[pos]
        for j in sorted(larger, key=ids.index):
            larger[j].discard(done)
            if not larger[j]:
                del larger[j]
                order.append(j)
        pos += 1
    return order + [i for i in ids if i not in order]


# --- torch's error for arguments no overload takes -----------------------------------------------

_TYPE_TEXT = {"Tensor": "Tensor", "Scalar": "Number", "int[]": "tuple of ints",
              "Tensor[]": "tuple of Tensors", "ScalarType": "torch.dtype",
              "Generator": "torch.Generator", "MemoryFormat": "torch.memory_format",
              "Layout": "torch.layout", "Device": "torch.device", "float[]": "tuple of floats",
              "bool[]": "tuple of bools"}


# NOTE [Binding reduction default]
# A loss schema's `int reduction=Mean` prints as at::Reduction::Mean in torch's Python binding,
# but the binding evaluates that default as 0 (no reduction): torch.ctc_loss(...),
# torch.hinge_embedding_loss(a, b), torch.kl_div(a, b) return per-element losses, while
# torch.ops.aten's overloads and the nn.functional forms (which pass the reduction) reduce.
# retrograd's public bindings do the same.


def _default_text(arg) -> str:
    value = arg.default
    if isinstance(value, str) and arg.type.rstrip("?") == "str":
        return f'"{value}"'  # a string default is quoted (padding = "valid")
    if isinstance(value, tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if arg.name == "reduction" and arg.type == "int" and value == 1:
        return "at::Reduction::Mean"  # the losses' C++ default, as torch's binding prints it
    return str(value)


def _binding_args(opdef, method: bool, with_out: bool) -> list:
    """An overload's arguments as torch's Python binding lists them: no self for a method, and
    out= last, or just before a factory's TensorOptions (dtype, layout, ...)."""
    from retrograd._ops.schema import Arg

    args = list(_args(opdef)[1 if method else 0:])
    if with_out:
        several = len(opdef.schema.returns) > 1
        out = Arg("out", "Tensor[]" if several else "Tensor", None, True, True)
        factory = any(a.name == "requires_grad" and a.kwarg_only for a in args)
        at = next((i for i, a in enumerate(args) if factory and a.kwarg_only
                   and a.name in _FACTORY_DEFAULTS), len(args))
        args.insert(at, out)
    return args


def _display_name(a) -> str:
    return "input" if a.name == "self" and a.is_tensor else a.name


def option_text(opdef, method: bool, with_out: bool) -> str:
    """An overload as torch's argument parser lists it: (Tensor input, Number other, ...)."""
    return _option_text(_binding_args(opdef, method, with_out))


def _option_text(binding: list) -> str:
    parts: list = []
    kw = False
    for a in binding:
        if a.kwarg_only and not kw:
            parts.append("*")
            kw = True
        base = a.type.rstrip("?")
        text = f"{_TYPE_TEXT.get(base, base)} {_display_name(a)}"
        if a.has_default:
            text += f" = {_default_text(a)}"
        parts.append(text)
    return "(" + ", ".join(parts) + ")"


# overloads whose torch binding takes no out= (retrograd's entry points take it anyway, except
# those of _REFUSES_OUT, whose out= the dispatcher refuses as torch does)
_NO_OUT_IN_TORCH = frozenset({"rsub.Tensor", "rsub.Scalar", "remainder.Scalar_Tensor", "sum",
                              "prod", "var_mean", "var_mean.dim", "var_mean.correction",
                              "std_mean", "std_mean.dim", "std_mean.correction", "bernoulli.p"})
_HISTOGRAMDD = ("histogramdd", "histogramdd.int_bins", "histogramdd.TensorList_bins")
_NO_OUT_IN_TORCH = _NO_OUT_IN_TORCH | frozenset(_HISTOGRAMDD)
_REFUSES_OUT = frozenset({"bernoulli.p", *_HISTOGRAMDD})


def _value_type(v) -> str:
    from retrograd._dtype import dtype

    if isinstance(v, dtype):
        return "torch.dtype"
    return "Tensor" if isinstance(v, Tensor) else type_name(v)


def _takes_none(arg) -> bool:
    """None is a value of an optional type, or of an argument whose default is None."""
    return arg.type.endswith("?") or arg.has_default and arg.default is None


def _fits(arg, v) -> bool:
    if v is None:
        return _takes_none(arg)
    test = _check(_kind(arg), "v")
    if test is None:
        return True
    return bool(eval(test, _test_names(), {"v": v}))  # noqa: S307


def _test_names() -> dict:
    """What the tests _check writes refer to."""
    from retrograd._dtype import dtype
    from retrograd._ops.random import Generator

    return {"_T": Tensor, "_NUM": _NUMBERS, "_is_number": _is_number, "_np_bool": np.bool_,
            "_is_int": _is_int, "_is_int_list": _is_int_list, "_is_int_seq": _is_int_seq,
            "_is_real": _is_real, "_Gen": Generator, "_DT": dtype}


def _invalid(group: Group, params: list, values: tuple) -> TypeError:
    """torch's TypeError for arguments no overload takes, from the dispatcher's arguments
    (`values`, in the order of `params`, then out): those left at their default count as not
    given, and those after one not given as given by keyword. When the number of arguments fits
    one overload alone, torch says what is wrong with them for it (_parse_error); otherwise it
    lists the overloads."""
    args: list = []
    kwargs: dict = {}
    gap = False  # an argument after one not given was given by keyword
    for p, value in zip(params, values):
        if isinstance(value, _Unset) or not p.required and value is p.default:
            gap = True
            continue
        if p.kwarg_only or gap:
            kwargs[p.name] = value
        else:
            args.append(value)
    if len(values) > len(params) and values[-1] is not None:
        kwargs["out"] = values[-1]
    kwargs = dict(sorted(kwargs.items()))  # torch lists the keywords given by name
    if group.method:
        args = args[1:]
    return _invalid_call(group, args, kwargs)


def _invalid_call(group: Group, args: list, kwargs: dict) -> TypeError:
    """_invalid for the arguments as given (self left out of a method's)."""
    options = []
    for k in torch_order(group):
        opdef, fn = group.entries[k]
        with_out = not group.method and (_takes_out(fn) or len(opdef.schema.returns) > 1) \
            and opdef.name not in _NO_OUT_IN_TORCH
        options.append(_binding_args(opdef, group.method, with_out))
    given = len(args) + len(kwargs)
    plausible = [o for o in options if sum(not a.has_default for a in o) <= given <= len(o)]
    if len(plausible) == 1:
        error = _parse_error(group.name, plausible[0], args, kwargs)
        if error is not None:
            return error
    got = [_value_type(v) for v in args] + [f"{k}={_value_type(v)}" for k, v in kwargs.items()]
    # torch's text keeps a trailing ", " when only keywords were given
    lines = [E.INVALID_ARGUMENTS.format(group.name, ", ".join(got) + (", " if kwargs and not args
                                                                       else ""))]
    for binding in options:
        text = _option_text(binding)
        lines.append(f" * {text}")
        # torch compares the given count with the listing's comma-separated pieces ("*"
        # included) and looks for keywords among the last pieces' final words
        pieces = text[1:-1].split(", ") if text != "()" else []
        if len(pieces) != len(args) + len(kwargs):
            continue
        last_words = {p.rsplit(" ", 1)[-1] for p in pieces[max(len(pieces) - len(kwargs), 0):]}
        unknown = [name for name in kwargs if name not in last_words]
        if unknown:
            lines.append(E.INVALID_KEYWORDS.format(", ".join(unknown)))
            continue
        by_piece: list = []
        for a in binding:
            if a.kwarg_only and "*" not in [x for x, _ in by_piece]:
                by_piece.append(("*", None))
            by_piece.append(("", a))
        marks = []
        for (_, a), v, t in zip(by_piece, args, got):
            marks.append(t if a is not None and _fits(a, v) else f"!{t}!")
        by_name = {_display_name(a): a for a in binding}
        for name, v in kwargs.items():
            t = _value_type(v)
            fits = name in by_name and _fits(by_name[name], v)
            marks.append(f"{name}={t}" if fits else f"{name}=!{t}!")
        lines.append(E.INVALID_TYPES.format(", ".join(marks)))
    return TypeError("\n".join(lines) + "\n")


def _parse_error(name: str, binding: list, args: list, kwargs: dict) -> TypeError | None:
    """torch's error for arguments that one overload's binding does not take (too many, one
    missing, one of a wrong type, an unknown keyword), or None if it takes them."""
    positional = [_display_name(a) for a in binding if not a.kwarg_only]
    if len(args) > len(positional):
        least = sum(not a.has_default for a in binding)
        plural = "" if len(positional) == 1 else "s"
        span = f"from {least} to {len(positional)}" if least != len(positional) \
            else str(len(positional))
        return TypeError(f"{name}() takes {span} positional argument{plural} but {len(args)} "
                         "were given")
    for i, a in enumerate(binding):
        arg_name = _display_name(a)
        by_keyword = i >= len(args)
        if by_keyword and arg_name not in kwargs:
            if a.has_default:
                continue
            missing = [f'"{_display_name(b)}"' for b in binding[i:] if not b.has_default]
            return TypeError(f"{name}() missing {len(missing)} required positional arguments: "
                             f"{', '.join(missing)}")
        v = kwargs[arg_name] if by_keyword else args[i]
        if _fits(a, v):
            continue
        base = a.type.rstrip("?")
        want = _TYPE_TEXT.get(base, base)
        if by_keyword:
            return TypeError(f"{name}(): argument '{arg_name}' must be {want}, not "
                             f"{_value_type(v)}")
        where = f"{name}(): argument '{arg_name}' (position {i + 1}) must be {want}"
        if base == "int[]" and isinstance(v, (list, tuple)):
            for j, x in enumerate(v):
                if not (_is_int(x) or isinstance(x, Tensor) and x.ndim == 0):
                    return TypeError(f"{where}, but found element of type {_value_type(x)} at "
                                     f"pos {j}")
        return TypeError(f"{where}, not {_value_type(v)}")
    names = [_display_name(a) for a in binding]
    for key in kwargs:
        if key not in names:
            return TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if key in positional[:len(args)]:
            return TypeError(f"{name}() got multiple values for argument '{key}'")
    return None
