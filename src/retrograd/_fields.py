"""Field tables: the fields of a fresh core object, written once.

NOTE [Field tables]
A fresh Tensor, Node, SavedVariable, ViewInfo or VersionCounter is made on several paths: its
Python constructor, and the generated code of the hot paths (op entry points, the view fast path,
the inline save, the array backward, SavedVariable.unpack), which writes the fields inline because
a call costs more than the stores themselves. So that what a fresh object holds is said once, each
such class has ONE FieldTable, next to its class: for every slot, in order, the value a fresh
object gets (a Python expression, with `{param}` for what the maker supplies) and why, or UNSET
(and why) for a slot deliberately left unset until something needs it, or Fresh(table) for a slot
holding a new object of another table. From the table come both

- the constructor (`constructor`): a function compiled once through compile_function (NOTE
  [Visible generated code]), with the stores inline, no loop at run time; and
- the text every generated path inlines (`lines`), the very same stores.

A slot in __slots__ that its table does not list (or the other way round) fails at import. A path
that gives a slot another value than the table's says so by name (`override`), and a slot the
path writes itself further on is named in `later`; tests/test_field_tables.py builds each object
on every path and compares every slot, so a path cannot forget a field either.
"""

from __future__ import annotations

import ast
import functools
import string
from collections.abc import Callable, Iterable
from typing import Any

from retrograd._generated import compile_function


class _Unset:
    """The value of a slot a fresh object leaves unset (read with getattr, or set later)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()


class Fresh:
    """A slot holding a new object made from `table`, or None while `unless` (an expression)
    holds; `bind` names the local the generated code gives the new object."""

    __slots__ = ("table", "unless", "bind")

    def __init__(self, table: FieldTable, unless: str | None = None, bind: str = "obj") -> None:
        self.table = table
        self.unless = unless
        self.bind = bind


def slots_of(cls: type) -> tuple:
    """Every slot an instance of cls has (its own and its bases'), in definition order."""
    out: list = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__weakref__", "__dict__") and name not in out:
                out.append(name)
    return tuple(out)


@functools.cache
def _placeholders(text: str) -> frozenset:
    return frozenset(name for _, name, _, _ in string.Formatter().parse(text) if name)


@functools.cache
def _is_literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    return True


class FieldTable:
    """The fields of a fresh `cls`: (slot, value, why) for every slot (NOTE [Field tables]).

    alias: the name the class has in generated code (`_T` for Tensor); params: the names a
    maker supplies as `{param}` in values; names: the globals the values use."""

    __slots__ = ("cls", "alias", "fields", "why", "params", "names")

    def __init__(self, cls: type, alias: str, fields: Iterable, params: Iterable = (),
                 names: dict | None = None) -> None:
        fields = tuple(fields)
        self.cls = cls
        self.alias = alias
        self.fields = {name: value for name, value, _ in fields}
        self.why = {name: why for name, _, why in fields}
        self.params = tuple(params)
        self.names: dict = {"_new": object.__new__, alias: cls, **(names or {})}
        slots = slots_of(cls)
        if len(self.fields) != len(fields) or set(self.fields) != set(slots):
            raise TypeError(f"the field table of {cls.__name__} must list each of its slots once: "
                            f"slots {sorted(slots)}, table {sorted(n for n, _, _ in fields)}")
        for name, value in self.fields.items():
            if isinstance(value, Fresh):
                self.names.update(value.table.names)
            elif isinstance(value, str) and not _placeholders(value) <= set(self.params):
                raise TypeError(f"{cls.__name__}.{name}: {value!r} uses names that are not "
                                f"parameters of the table ({self.params})")

    def extend(self, cls: type, alias: str, fields: Iterable, params: Iterable = (),
               names: dict | None = None) -> FieldTable:
        """The table of a subclass, or of another shape of the same class (a SavedVariable
        keeping an array): these fields replace this table's of the same name (in place) and
        add the subclass's own (at the end), so a table says only how it differs."""
        own = {name: (name, value, why) for name, value, why in fields}
        merged = [own.pop(name, (name, value, self.why[name]))
                  for name, value in self.fields.items()]
        return FieldTable(cls, alias, merged + list(own.values()),
                          dict.fromkeys((*self.params, *params)),
                          {**self.names, **(names or {})})

    def lines(self, target: str, values: dict | None = None, *, override: dict | None = None,
              later: Iterable = (), only: Iterable | None = None,
              indent: str = "    ") -> list:
        """Code that gives `target` (an object of cls, already allocated) its fields.

        values: an expression for each parameter; override: slot -> the expression this path
        stores instead (or (local, expression) to also bind a local to it); later: slots this
        path writes further on (`only`: the slots written now, a later step's)."""
        values = values or {}
        missing = [p for p in self.params if p not in values]
        override = override or {}
        later = set(later)
        if only is not None:
            later |= set(self.fields) - set(only)
        out: list = []
        chain: list = []  # consecutive slots getting one literal: a single chained store

        def flush() -> None:
            if chain:
                out.append(indent + " = ".join(f"{target}.{n}" for n in chain[1:]) + " = "
                           + chain[0])
                chain.clear()

        for name, value in self.fields.items():
            if name in later:
                continue
            if name in override:
                value = override[name]
            if value is UNSET:
                continue
            if isinstance(value, Fresh):
                flush()
                out += self._fresh_lines(target, name, value, indent)
                continue
            if isinstance(value, tuple):  # (local, expression)
                flush()
                local, expr = value
                out.append(f"{indent}{local} = {target}.{name} = {expr}")
                continue
            used = _placeholders(value)
            if used & set(missing):
                raise TypeError(f"{self.cls.__name__}.{name} needs {sorted(used)}: give them")
            expr = value.format(**values)
            if _is_literal(expr):
                if chain and chain[0] != expr:
                    flush()
                if not chain:
                    chain.append(expr)
                chain.append(name)
                continue
            flush()
            out.append(f"{indent}{target}.{name} = {expr}")
        flush()
        return out

    @staticmethod
    def _fresh_lines(target: str, name: str, fresh: Fresh, indent: str) -> list:
        inner = indent if fresh.unless is None else indent + "    "
        made = [f"{inner}{fresh.bind} = {target}.{name} = _new({fresh.table.alias})",
                *fresh.table.lines(fresh.bind, indent=inner)]
        if fresh.unless is None:
            return made
        return [f"{indent}if {fresh.unless}:", f"{indent}    {target}.{name} = None",
                f"{indent}else:", *made]

    def constructor(self, name: str, signature: str, values: dict | None = None, *,
                    target: str | None = None, override: dict | None = None,
                    later: Iterable = (), only: Iterable | None = None,
                    qualname: str | None = None) -> Callable:
        """The Python constructor made from the table: `def name(signature)` that allocates an
        object and returns it, or, with `target` (e.g. "self", a name in the signature), fills
        that one (an __init__). values: each parameter's expression (default: the parameter
        itself, which the signature must then bind); override, later, only: as for lines."""
        values = {p: p for p in self.params} | (values or {})
        obj = target or "obj"
        lines = [f"def {name}({signature}):"]
        if target is None:
            lines.append(f"    {obj} = _new({self.alias})")
        lines += self.lines(obj, values, override=override, later=later, only=only)
        if target is None:
            lines.append(f"    return {obj}")
        ns: dict[str, Any] = dict(self.names)
        ns["__name__"] = self.cls.__module__
        fn = compile_function(name, lines, ns, f"{self.cls.__name__} {name}",
                              qualname or name)
        fn.__module__ = self.cls.__module__
        return fn
