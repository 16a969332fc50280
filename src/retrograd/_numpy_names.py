"""NumPy's argument names in torch's functions: `axis` for `dim`, `keepdims` for `keepdim`.

NOTE [NumPy argument names]
torch's argument parser, which binds every function torch generates from its op schemas (the
torch namespace, Tensor's methods, torch.linalg's, torch.special's, the native functions of
torch.nn.functional), takes NumPy's names for two parameters: `x.sum(axis=0, keepdims=True)`,
`torch.cat(ts, axis=1)`, `torch.cumprod(a, axis=0)`. Functions torch writes in Python
(`F.softmax`, `torch.split`, `F.normalize`) do not, and neither do retrograd's counterparts.

retrograd's entries are Python functions with the schema's own signature (NOTE [Fast path]), so
Python itself would refuse a NumPy name. An entry with one of these parameters also takes
`**_np`, and its body starts with one test, `if _np:`, that sends a call using them here; where
the parameter is required (`cumprod`'s dim), it and the required parameters after it default
to REQUIRED, and the same test also checks that none of those is missing. Here the NumPy names
are renamed and the entry is called again, so the call runs exactly as if it had been written
with torch's names. A call without NumPy names pays for the one test.

As in torch, a NumPy name whose parameter is also given under its own name (`x.sum(0,
axis=1)`) is an unexpected keyword argument. One corner differs: a parameter given under its
own name with the very object that is its default (`keepdim=False, keepdims=True`) is taken as
not given, since the entry cannot tell the two apart; the NumPy name's value is used.

torch's parser also takes `x`, `a` and `x1` for `input` and `x2` for `other`. retrograd does
not: nearly every op has those parameters, so the test would be on every op call, for names
that programs hardly ever use (README, "Known gaps").
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from retrograd._generated import compile_function, forwarding_signature

NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}
_ALIASED = frozenset(NUMPY_NAMES.values())


class _Required:
    """The default of a required parameter that a NumPy name may fill."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<required>"


REQUIRED = _Required()


class NumpyNamesSpec:
    """What an entry's second call needs: its parameters in order, their defaults (REQUIRED
    for required ones), how many are positional, and its name for messages."""

    __slots__ = ("names", "defaults", "n_positional", "qualname", "index")

    def __init__(self, names: tuple, defaults: tuple, n_positional: int, qualname: str):
        self.names = names
        self.defaults = defaults
        self.n_positional = n_positional
        self.qualname = qualname
        self.index = {n: i for i, n in enumerate(names)}


def has_numpy_names(names: list) -> bool:
    """Whether a function with these parameter names takes NumPy names."""
    return any(n in _ALIASED for n in names)


def numpy_names_signature(params: list, ns: dict, fname: str, qualname: str) -> tuple:
    """(signature parts, first body lines) of a generated entry that takes NumPy names, whose
    namespace `ns` this completes.

    `params` are the parts of its signature: `name`, `name=KEY` (KEY names the default in
    `ns`, or is None), and the markers `*` and `/` (no *args or **kwargs). The body lines call
    the entry again (as `fname`, its global name in `ns`) with the NumPy names renamed."""
    names: list = []
    defaults: list = []
    out: list = []
    guarded: list = []
    keyword_only = False
    n_positional = 0
    filling = False  # a positional parameter before this one defaults to REQUIRED
    for part in params:
        if part in ("*", "/"):
            keyword_only = keyword_only or part == "*"
            out.append(part)
            continue
        name, _, key = part.partition("=")
        if key:
            default = None if key == "None" else ns[key]
        elif name in _ALIASED or filling and not keyword_only:
            # Python refuses a required parameter after one with a default, and a missing
            # one before the body runs: both default to REQUIRED and are checked below
            default, part = REQUIRED, f"{name}=_np_REQ"
            filling = filling or not keyword_only
            guarded.append(name)
        else:
            default = REQUIRED  # stays required (keyword-only): Python checks it
        names.append(name)
        defaults.append(default)
        n_positional += not keyword_only
        out.append(part)
    out.append("**_np")
    spec = NumpyNamesSpec(tuple(names), tuple(defaults), n_positional, qualname)
    ns["_np_spec"], ns["_np_REQ"], ns["_np_call"] = spec, REQUIRED, call_with_numpy_names
    test = " or ".join(["_np"] + [f"{n} is _np_REQ" for n in guarded])
    values = "(" + "".join(f"{n}, " for n in names) + ")"
    return out, [f"    if {test}:", f"        return _np_call(_np_spec, {fname}, {values}, _np)"]


def hide_numpy_names(fn: Callable) -> Callable:
    """Give a generated entry that takes NumPy names the signature torch documents (what
    inspect, help() and the stubs show): no **_np, its required parameters required again."""
    sig = inspect.signature(fn)
    params = [p.replace(default=p.empty) if p.default is REQUIRED else p
              for p in sig.parameters.values() if p.name != "_np"]
    fn.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return fn


def call_with_numpy_names(spec: NumpyNamesSpec, fn: Callable, values: tuple, extra: dict) -> Any:
    """Call `fn` again with the values of its parameters, the NumPy names in `extra` put in
    the places of torch's (or the error that Python or torch gives for the call)."""
    values_list = list(values)
    for key, value in extra.items():
        i = spec.index.get(NUMPY_NAMES.get(key, ""))
        if i is None or values_list[i] is not spec.defaults[i]:
            raise TypeError(f"{spec.qualname}() got an unexpected keyword argument '{key}'")
        values_list[i] = value
    missing = [(i, n) for i, n in enumerate(spec.names) if values_list[i] is REQUIRED]
    if missing:
        kind = "positional" if missing[0][0] < spec.n_positional else "keyword-only"
        quoted = [f"'{n}'" for _, n in missing]
        listed = quoted[0] if len(quoted) == 1 else (
            " and ".join(quoted) if len(quoted) == 2 else
            ", ".join(quoted[:-1]) + ", and " + quoted[-1])
        plural = "s" if len(quoted) > 1 else ""
        raise TypeError(f"{spec.qualname}() missing {len(quoted)} required {kind} "
                        f"argument{plural}: {listed}")
    k = spec.n_positional
    return fn(*values_list[:k], **dict(zip(spec.names[k:], values_list[k:])))


def numpy_names(fn: Callable) -> Callable:
    """Mark a hand-written function that torch binds from an op schema and that retrograd
    publishes through an entry made for __torch_function__ (NOTE [Torch function entries]):
    that entry takes NumPy's argument names. fn itself is unchanged (retrograd's own calls
    of it pay nothing); a function published as it is needs numpy_names_entry instead."""
    fn.__numpy_names__ = True  # type: ignore[attr-defined]
    return fn


def numpy_names_entry(fn: Callable) -> Callable:
    """A generated entry of fn's signature that also takes NumPy's argument names, for a
    hand-written function that torch binds from an op schema and that retrograd publishes as
    it is (torch.linalg's, torch.special's, Tensor.size)."""
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
           for p in inspect.signature(fn).parameters.values()):
        raise TypeError(f"numpy_names_entry: {fn.__qualname__} takes *args or **kwargs")
    ns: dict = {"_fn": fn}
    params, call = forwarding_signature(fn, ns, "_d")
    name = fn.__name__
    sig, guard = numpy_names_signature(params, ns, name, fn.__qualname__)
    lines = [f"def {name}({', '.join(sig)}):", *guard, f"    return _fn({', '.join(call)})"]
    entry = compile_function(name, lines, ns, f"{fn.__qualname__} NumPy names", fn.__qualname__)
    # fn's name, doc, annotations; __wrapped__ for inspect's signature and source
    return functools.update_wrapper(entry, fn)
