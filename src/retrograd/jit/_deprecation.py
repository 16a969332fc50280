"""The DeprecationWarnings torch 2.13 gives for its TorchScript entry points, same text."""

from __future__ import annotations

import sys

from retrograd import _warning_site as _ws


def warn_export_path(name: str) -> None:
    """script, trace, trace_method, script_method: torch points to compile or export."""
    if sys.version_info >= (3, 14):
        msg = (f"`torch.jit.{name}` is not supported in Python 3.14+ and may break. "
               "Please switch to `torch.compile` or `torch.export`.")
    else:
        msg = (f"`torch.jit.{name}` is deprecated. Please switch to `torch.compile` or "
               "`torch.export`.")
    _ws.warn(msg, DeprecationWarning, stacklevel=3)


def warn_compile_path(name: str) -> None:
    """fork, wait, freeze, interface, ...: torch points to compile only."""
    _ws.warn(f"`torch.jit.{name}` is deprecated. Please use `torch.compile` instead.",
             DeprecationWarning, stacklevel=3)


def warn_optimize(optimize: object) -> None:
    if optimize is not None:
        _ws.warn("`optimize` is deprecated and has no effect. "
                 "Use `with torch.jit.optimized_execution()` instead",
                 FutureWarning, stacklevel=3)
