"""How a call_function target is named in printed graphs and generated code."""

from __future__ import annotations

import builtins
import operator
from typing import Any

from retrograd._ops.dispatch import OpOverload, OpOverloadPacket

# public modules whose functions are named by their path there, searched in this order
PUBLIC_MODULES = ("retrograd", "retrograd.nn.functional", "retrograd.linalg", "retrograd.special",
                  "retrograd.fft")
_public_names: dict | None = None  # id(function) -> "retrograd.relu"


def public_name_table() -> dict:
    global _public_names
    if _public_names is None:
        import importlib

        table: dict = {}
        for mod_name in reversed(PUBLIC_MODULES):  # the first module listed wins
            try:
                mod = importlib.import_module(mod_name)
            except ImportError:
                continue
            for name, value in vars(mod).items():
                if not name.startswith("_") and callable(value) and not isinstance(value, type) \
                        and not hasattr(value, "__fx_records__"):  # a trace's stand-in
                    table[id(value)] = f"{mod_name}.{name}"
        _public_names = table
    return _public_names


def qualified_name(target: Any) -> str:
    """`retrograd.ops.aten.mul.Tensor`, `retrograd.relu`, `operator.add`, `builtins.getattr`,
    or `module.qualname` for anything else."""
    if isinstance(target, (OpOverload, OpOverloadPacket)):
        return f"retrograd.ops.{target}"
    name = public_name_table().get(id(target))
    if name is not None:
        return name
    short = getattr(target, "__name__", "")
    if getattr(builtins, short, None) is target:
        return f"builtins.{short}"
    if getattr(operator, short, None) is target:
        return f"operator.{short}"
    module = getattr(target, "__module__", None) or "__main__"
    return f"{module}.{getattr(target, '__qualname__', getattr(target, '__name__', repr(target)))}"


def public_path(target: Any) -> str | None:
    """The dotted path under `retrograd` by which generated code can reach `target`, if any."""
    if isinstance(target, (OpOverload, OpOverloadPacket)):
        return f"retrograd.ops.{target}"
    return public_name_table().get(id(target))
