"""Parser for torch-style op schemas.

For example "mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)".

The schema says, once and in the notation PyTorch users read in native_functions.yaml, an op's
arguments, which are tensors, their defaults, which are keyword-only, and through alias
annotations which arguments the op writes (`(a!)`) or returns a view of (`(a)`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Arg:
    name: str
    type: str
    default: object = None
    has_default: bool = False
    kwarg_only: bool = False
    alias: str | None = None  # "a" for a view, "a!" for a write
    symint: bool = False  # declared SymInt (an int here; view replay's visitors tell it apart)
    # a list declared without a size (`int[]`, not `int[1]`): torch takes no bare int for it
    unsized: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.type in ("Tensor", "Tensor?")

    @property
    def is_tensor_list(self) -> bool:
        return self.type in ("Tensor[]", "Tensor?[]")

    @property
    def is_written(self) -> bool:
        return self.alias is not None and self.alias.endswith("!")


@dataclass(frozen=True)
class Return:
    type: str
    name: str | None = None
    alias: str | None = None


@dataclass(frozen=True)
class Schema:
    name: str
    overload: str
    args: tuple
    returns: tuple
    text: str = field(repr=False, default="")

    def __str__(self) -> str:
        # torch's FunctionSchema text: "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor"
        return f"aten::{self.text}" if self.text else f"aten::{self.full_name}"

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def is_inplace(self) -> bool:
        return any(a.is_written for a in self.args if not a.kwarg_only)

    @property
    def is_out(self) -> bool:
        return any(a.is_written for a in self.args if a.kwarg_only)

    @property
    def is_view(self) -> bool:
        return any(r.alias is not None and not r.alias.endswith("!") for r in self.returns)

    @property
    def written_args(self) -> tuple:
        return tuple(a.name for a in self.args if a.is_written)


def _split_top(s: str) -> list:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        parts.append(tail)
    return parts


def _parse_type(t: str) -> tuple:
    """'Tensor(a!)' -> ('Tensor', 'a!'); 'Tensor(a)?' unsupported; 'int[2]' -> 'int[]'."""
    alias = None
    if "(" in t:
        base, rest = t.split("(", 1)
        alias, after = rest.split(")", 1)
        alias = alias.split(" -> ")[0].strip()  # "a -> *": a view whose outputs alias a
        t = base + after
    if "[" in t and not t.endswith("[]") and not t.endswith("[]?"):
        base, rest = t.split("[", 1)
        t = base + "[]" + rest.split("]", 1)[1]
    return t.replace("SymInt", "int"), alias


def _parse_default(s: str):
    if s == "None":
        return None
    if s in ("True", "False"):
        return s == "True"
    if s.startswith("["):
        return tuple(ast.literal_eval(s))
    if s in ("contiguous_format", "Mean", "Sum", "None_"):
        return s
    try:
        return ast.literal_eval(s)
    except (ValueError, SyntaxError):
        return s


def parse_schema(text: str) -> Schema:
    head, ret = text.rsplit(" -> ", 1) if " -> " in text else text.rsplit("->", 1)
    name_part, args_part = head.strip().split("(", 1)
    args_part = args_part.rsplit(")", 1)[0]
    name, _, overload = name_part.strip().partition(".")
    args, kw = [], False
    for a in _split_top(args_part):
        if a == "*":
            kw = True
            continue
        decl, eq, default = a.partition("=")
        typ, nm = decl.strip().rsplit(" ", 1)
        symint = "SymInt" in typ
        unsized = "[]" in typ
        typ, alias = _parse_type(typ.strip())
        args.append(Arg(nm, typ, _parse_default(default.strip()) if eq else None, bool(eq), kw,
                        alias, symint, unsized))
    ret = ret.strip()
    if ret.startswith("("):
        ret = ret[1:-1]
    returns = []
    for r in _split_top(ret):
        if not r:
            continue
        bits = r.split()
        typ, alias = _parse_type(bits[0])
        returns.append(Return(typ, bits[1] if len(bits) > 1 else None, alias))
    return Schema(name, overload, tuple(args), tuple(returns), text)
