"""Docstrings of the generated op functions, made from the declaration: the schema, then the
derivative formula of each input as it is written in the op's module.

    >>> print(retrograd.exp.__doc__)
    exp(Tensor self) -> Tensor
    <BLANKLINE>
    Derivatives (ExpBackward0):
      self: grad * result
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Callable


def op_doc(opdef) -> str:
    lines = [opdef.schema.text or opdef.name, ""]
    if not opdef.formulas:
        lines.append("Derivatives: none")
    else:
        lines.append(f"Derivatives ({opdef.node_name}):")
        names = [opdef.arg_names[i] for i in opdef.tensor_idx]
        for f in opdef.formulas:
            lines.append(f"  {', '.join(names[i] for i in f.inputs)}: {formula_text(f.fn)}")
    return "\n".join(lines)


def document_overloads(ops: dict, tables: tuple) -> None:
    """Give a hand-written public function without a docstring (a composite such as max) the
    docstrings of the declared ops of its name, one after another."""
    by_name: dict = {}
    for opdef in ops.values():
        by_name.setdefault(opdef.schema.name, []).append(opdef)
    for table in tables:
        for name, fn in table.items():
            if getattr(fn, "__doc__", "") is None and name in by_name:
                try:
                    fn.__doc__ = "\n\n".join(op_doc(o) for o in by_name[name])
                except (AttributeError, TypeError):  # not a Python function
                    pass
    forget_sources()


def formula_text(fn: Callable) -> str:
    """A lambda's body as written in its source file; a named function's name and what it
    reads, e.g. "_silu_grad(grad, self)"."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return getattr(fn, "__name__", None) or repr(fn)
    if fn.__name__ != "<lambda>":
        return f"{fn.__name__}({', '.join(code.co_varnames[:code.co_argcount])})"
    text = _lambda_body(code)
    return text if text is not None else "<lambda>"


def _lambda_body(code) -> str | None:
    """The source span the lambda's instructions cover (Python records each instruction's
    columns), widened over brackets the span leaves open; None if its brackets do not match.
    Much cheaper than tokenizing or parsing the source, which matters at import time."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return None  # Python 3.10 records no columns
    start: tuple | None = None
    end: tuple | None = None
    for line, end_line, col, end_col in positions():
        # entries without columns, or (0, 0), are the lambda's own set-up and return
        if line is None or col is None or not (col or end_col):
            continue
        if start is None or (line, col) < start:
            start = (line, col)
        if end is None or (end_line, end_col) > end:
            end = (end_line, end_col)
    lines = _lines_of(code.co_filename)
    if start is None or end is None or end[0] > len(lines):
        return None
    if start[0] == end[0]:
        text = lines[start[0] - 1][start[1]:end[1]]
    else:
        text = lines[start[0] - 1][start[1]:] + "".join(lines[start[0]:end[0] - 1]) \
            + lines[end[0] - 1][:end[1]]
    # the span of `(a * b).sum()` starts at `a`: take in the opening brackets before it
    first, col = lines[start[0] - 1], start[1]
    while _open_count(first[col:start[1]] + text) < 0:
        before = first[:col].rstrip()
        if not before or before[-1] not in "([{":
            return None
        col = len(before) - 1
    text = first[col:start[1]] + text
    if _open_count(text):
        return None
    return re.sub(r"\s*\n\s*", " ", text).strip()


# source lines of the op modules while their ops are declared (linecache would keep them for
# the life of the process); forget_sources drops them once every op is declared
_SOURCES: dict = {}


def _lines_of(filename: str) -> list:
    lines = _SOURCES.get(filename)
    if lines is None:
        cached = linecache.cache.get(filename)
        if cached is not None and len(cached) == 4:
            lines = cached[2]
        else:
            try:
                with open(filename, encoding="utf-8") as f:
                    lines = f.read().splitlines(True)
            except (OSError, UnicodeDecodeError):
                lines = []
        _SOURCES[filename] = lines
    return lines


def forget_sources() -> None:
    _SOURCES.clear()


def _open_count(text: str) -> int:
    """Opening minus closing brackets (negative: the text closes one it did not open)."""
    return (text.count("(") + text.count("[") + text.count("{")
            - text.count(")") - text.count("]") - text.count("}"))
