"""The compiler behind retrograd.compile (NOTE [Compiler pipeline] in api.py)."""

from retrograd._compiler import config
from retrograd._compiler.api import CompiledCallable, compile_callable, counters, reset

__all__ = ["CompiledCallable", "compile_callable", "config", "counters", "reset"]
