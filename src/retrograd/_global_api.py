"""Top-level functions of torch's namespace that configure the library or answer about it:
anomaly-mode flags, build flags, denormal flushing, the deprecated default tensor type, and the
SymInt-aware helpers, which on plain Python numbers fall back to Python's own operations."""

from __future__ import annotations

import builtins
import importlib
import math
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._autograd.anomaly import anomaly
from retrograd._legacy import tensortype
from retrograd._tensor import Tensor

# what torch's CPU wheel reports: LAPACK, MKL, OpenMP and the FFT library are built in (the
# linear algebra here runs on NumPy's LAPACK)
has_lapack = True
has_mkl = True
has_openmp = True
has_spectral = True


def _require_bool(fn: str, arg: str, pos: int, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be bool, not "
                        f"{type(value).__name__}")


def _require_tensor(fn: str, value: Any) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")


def is_anomaly_enabled() -> bool:
    return anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return anomaly.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turns anomaly mode on or off for the whole process (what detect_anomaly does for a
    block)."""
    _require_bool("set_anomaly_enabled", "enabled", 1, enabled)
    _require_bool("set_anomaly_enabled", "check_nan", 2, check_nan)
    anomaly.enabled, anomaly.check_nan = enabled, check_nan


def set_flush_denormal(mode: bool) -> bool:
    """Whether denormal floats are flushed to zero. NumPy's arithmetic cannot be switched to
    flush them, so turning it on reports False (not done), and turning it off, what NumPy
    always does, reports True."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return not mode


def is_distributed(input: Tensor) -> bool:
    _require_tensor("is_distributed", input)
    return False


def get_device(input: Tensor) -> int:
    """The device index of a tensor: -1 for the CPU."""
    _require_tensor("get_device", input)
    return input.get_device()


_warned_tensor_type = False


def _resolve_dotted(name: str) -> Any:
    # "torch.DoubleTensor" names retrograd's own type: programs keep torch's spelling
    parts = name.split(".")
    if parts[0] == "torch":
        parts[0] = "retrograd"
    obj = importlib.import_module(parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def set_default_tensor_type(t: Any, /) -> None:
    """Deprecated: sets the default floating-point dtype from a tensor type such as
    DoubleTensor (or its name, "torch.DoubleTensor")."""
    global _warned_tensor_type
    if isinstance(t, str):
        t = _resolve_dotted(t)
    if not _warned_tensor_type:  # torch warns once per process
        _warned_tensor_type = True
        _ws.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                 "use torch.set_default_dtype() and torch.set_default_device() as "
                 "alternatives.", UserWarning, stacklevel=2)
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if t.dtype not in (D.float16, D.bfloat16, D.float32, D.float64):
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(t.dtype)


# --- SymInt-aware helpers: retrograd has no symbolic sizes, so these are Python's operations --

_NUMBERS = (np.integer, np.floating, builtins.int, builtins.float)
_FLOATS = (np.floating, builtins.float)


def sym_not(a: Any) -> Any:
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


def sym_float(a: Any) -> Any:
    if hasattr(a, "__sym_float__"):
        return a.__sym_float__()
    return builtins.float(a)


def sym_int(a: Any) -> Any:
    return builtins.int(a)


def _check_numbers(a: Any, b: Any) -> None:
    for v in (a, b):
        if not isinstance(v, _NUMBERS):
            raise AssertionError(f"expected {_NUMBERS}, got {type(v)}")


def sym_max(a: Any, b: Any) -> Any:
    """max that gives a float whenever either argument is one."""
    _check_numbers(a, b)
    if isinstance(a, _FLOATS) or isinstance(b, _FLOATS):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a: Any, b: Any) -> Any:
    """min that gives a float whenever either argument is one."""
    _check_numbers(a, b)
    if isinstance(a, _FLOATS) or isinstance(b, _FLOATS):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_sum(*args: Any) -> Any:
    """Sum of sym_sum([a, b, c]) or sym_sum(a, b, c)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return builtins.sum(args)


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """`t if b else f`, with both branches of one type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def _no_symbols(self: Any, *args: Any) -> None:
    raise TypeError("retrograd has no symbolic sizes: sizes are Python ints")


# torch's SymInt, SymFloat and SymBool: sizes are plain ints in eager retrograd (and in what
# retrograd.compile captures), so no value is ever one of these; `isinstance(n, SymInt)` is
# False, as in eager torch
SymInt = type("SymInt", (), {"__init__": _no_symbols, "__module__": "retrograd"})
SymFloat = type("SymFloat", (), {"__init__": _no_symbols, "__module__": "retrograd"})
SymBool = type("SymBool", (), {"__init__": _no_symbols, "__module__": "retrograd"})

_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def sym_constrain_range(size: Any, *, min: Any = None, max: Any = None) -> None:  # noqa: A002
    """Check that a concrete size lies in [min, max] (torch's check for a plain int)."""
    lo = _INT64_MIN if min is None else min
    hi = _INT64_MAX if max is None else max
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size: Any, *, min: Any = None, max: Any = None  # noqa: A002
                                 ) -> None:
    """sym_constrain_range for a value used as a size (at least 0 unless min says more)."""
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr: Any) -> Any:
    """A size standing for `expr`: the value itself when it is concrete."""
    return expr


def _sym_math(name: str):
    def fn(a: Any) -> Any:
        if hasattr(a, f"__sym_{name}__"):
            return getattr(a, f"__sym_{name}__")()
        return getattr(math, name)(a)

    fn.__name__ = fn.__qualname__ = f"_sym_{name}"
    return fn


_sym_sqrt = _sym_math("sqrt")
_sym_cos = _sym_math("cos")
_sym_cosh = _sym_math("cosh")
_sym_sin = _sym_math("sin")
_sym_sinh = _sym_math("sinh")
_sym_tan = _sym_math("tan")
_sym_tanh = _sym_math("tanh")
_sym_asin = _sym_math("asin")
_sym_acos = _sym_math("acos")
_sym_atan = _sym_math("atan")
_sym_log2 = _sym_math("log2")
sym_sqrt = _sym_sqrt
