"""Printing tensors exactly the way torch prints them (torch/_tensor_str.py's rules).

A formatter is chosen once per tensor from its (summarised) values: integers print plainly;
floats print in scientific notation when the finite non-zero magnitudes span more than 1e3,
exceed 1e8 or go below 1e-4 (or as set_printoptions(sci_mode=) says), else in "integer mode"
(`1.`) when every finite value is whole, else in fixed point with `precision` digits. Every
element is right-aligned to the widest finite non-zero element; nan, inf and zeros do not count
towards that width.
Rows are wrapped to `linewidth`; tensors above `threshold` elements show `edgeitems` at each end.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from retrograd import _dtype as D


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """torch.set_printoptions: profile is "default", "short" or "full"; sci_mode None = auto."""
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
        elif profile == "short":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
        elif profile == "full":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    return {"precision": PRINT_OPTS.precision, "threshold": PRINT_OPTS.threshold,
            "edgeitems": PRINT_OPTS.edgeitems, "linewidth": PRINT_OPTS.linewidth,
            "sci_mode": PRINT_OPTS.sci_mode}


class _Formatter:
    """Chooses the number format and column width from the values to be printed."""

    def __init__(self, arr: np.ndarray) -> None:
        self.floating = arr.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        prec = PRINT_OPTS.precision
        if not self.floating:
            if arr.size:
                if arr.dtype.kind == "b":
                    self.max_width = 5 if not arr.all() else 4
                else:
                    self.max_width = max(len(str(int(arr.max()))), len(str(int(arr.min()))))
        else:
            flat = arr.reshape(-1)
            vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
            if not vals.size:
                return  # zeros / nan / inf only: integer mode, width 1
            absv = np.abs(vals)
            lo, hi = float(absv.min()), float(absv.max())
            self.int_mode = bool((vals == np.ceil(vals)).all())
            if PRINT_OPTS.sci_mode is None:
                self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
            else:
                self.sci_mode = PRINT_OPTS.sci_mode
            if self.sci_mode:
                self.max_width = _max_len(vals, f"{{:.{prec}e}}")
            elif self.int_mode:
                self.max_width = _max_len(vals, "{:.0f}") + 1
            else:
                self.max_width = _max_len(vals, f"{{:.{prec}f}}")

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _max_len(vals: np.ndarray, fmt: str) -> int:
    return max(len(fmt.format(v)) for v in vals.tolist())


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The elements that will be shown when summarising (edgeitems at each end of each dim)."""
    e = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if not e and arr.ndim > 1:
        return arr[tuple(slice(0, 0) for _ in arr.shape)]
    for dim in range(arr.ndim):
        if arr.shape[dim] > 2 * e:
            idx = np.r_[0:e, arr.shape[dim] - e:arr.shape[dim]]
            arr = np.take(arr, idx, axis=dim)
    return arr


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.width() + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * e:
        data = ([fmt.format(v) for v in arr[:e].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-e:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _str_with_formatter(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    dim = arr.ndim
    if dim == 0:
        return fmt.format(arr.item())
    if dim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * e:
        slices = ([_str_with_formatter(arr[i], indent + 1, summarize, fmt) for i in range(e)]
                  + ["..."]
                  + [_str_with_formatter(arr[i], indent + 1, summarize, fmt)
                     for i in range(n - e, n)])
    else:
        slices = [_str_with_formatter(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _as_printable(arr: np.ndarray) -> np.ndarray:
    """float16 / bfloat16 / float8 print through float32, as torch does."""
    if arr.dtype.kind == "V" or (arr.dtype.kind == "f" and arr.dtype.itemsize <= 2):
        return arr.astype(np.float32)
    return arr


def tensor_str(arr: np.ndarray, indent: int) -> str:
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    arr = _as_printable(arr)
    fmt = _Formatter(_summarized(arr) if summarize else arr)
    return _str_with_formatter(arr, indent, summarize, fmt)


def _add_suffixes(tensor_str: str, suffixes: list, indent: int) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _grad_fn_name(fn) -> str:
    return fn.name().rsplit("::", 1)[-1]


def tensor_repr(t, *, tensor_contents: str | None = None) -> str:
    """repr(tensor): `tensor([...], dtype=..., grad_fn=<...>)` as torch writes it."""
    cls = type(t)
    plain = cls.__name__ in ("Tensor", "Parameter") and cls.__module__.startswith("retrograd")
    prefix = "tensor(" if plain else f"{cls.__name__}("
    indent = len(prefix)
    arr = t._data
    d = D.from_numpy_dtype(arr.dtype)
    suffixes = []
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if d is not D.get_default_dtype():
            suffixes.append(f"dtype={d!r}")
        body = "[]" if tensor_contents is None else tensor_contents
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        if d not in (D.get_default_dtype(), D.int64, D.bool):
            suffixes.append(f"dtype={d!r}")
        body = tensor_str(arr, indent) if tensor_contents is None else tensor_contents
    try:
        fn = t.grad_fn
        fn_name = None if fn is None else _grad_fn_name(fn)
    except RuntimeError:
        fn_name = "Invalid"
    if fn_name is not None:
        suffixes.append(f"grad_fn=<{fn_name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    if TANGENT_OF is not None:
        tangent = TANGENT_OF(t)
        if tangent is not None:
            suffixes.append(f"tangent={tangent!r}")
    return _add_suffixes(prefix + body, suffixes, indent)


# set by forward-mode AD (retrograd._ops.forward_ad): a dual tensor's tangent, for its repr
TANGENT_OF: Callable | None = None
