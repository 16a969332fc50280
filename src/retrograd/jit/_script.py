"""script and the names around it, run eagerly.

retrograd has no TorchScript compiler: `script` returns what it is given (the function, the
module, the class), so calling it, its gradients, its state_dict and train()/eval() are those
of the eager object. Markers that only steer the compiler (Attribute, Final, annotate,
interface) give their value back.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from retrograd.jit._deprecation import warn_compile_path, warn_export_path, warn_optimize
from retrograd.nn.modules.module import Module

T = TypeVar("T")

__all__ = ["Attribute", "CompilationUnit", "Error", "Final", "RecursiveScriptModule",
           "ScriptFunction", "ScriptModule", "ScriptWarning", "annotate", "interface",
           "is_scripting", "script", "script_if_tracing", "script_method"]

Final = typing.Final

_NO_COMPILER = ("retrograd runs TorchScript code eagerly, as Python, and has no TorchScript "
                "compiler")


class Error(Exception):
    """torch.jit.Error: what TorchScript code raises. Eager code raises Python's own
    exceptions, so retrograd never raises this; it is here for `except` clauses."""


Error.__module__ = "retrograd.jit"


class ScriptWarning(Warning):
    pass


class Attribute(NamedTuple):
    """A value with the TorchScript type of a ScriptModule attribute. A ScriptModule stores the
    value (the type is for the compiler); elsewhere the pair is given back, as in torch."""
    value: Any
    type: Any


class ScriptModule(Module):
    """Base of scripted modules. Subclassing it (with @script_method methods) gives a plain
    eager module; attributes set as `Attribute(value, type)` store the value."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Attribute):
            value = value.value
        super().__setattr__(name, value)


class RecursiveScriptModule(ScriptModule):
    """What torch.jit.script makes of a module. retrograd's script returns the module itself,
    so no object is of this type; it is here for isinstance checks and annotations."""


class ScriptFunction:
    """What torch.jit.script makes of a function. retrograd's script returns the function
    itself, so no object is of this type."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("retrograd.jit.ScriptFunction: No constructor defined!")


class CompilationUnit:
    """Holds compiled TorchScript functions. An empty one can be made (torch's tracer takes one
    as an argument); compiling source is refused."""

    def __init__(self, lang: str = "", _frames_up: int = 0) -> None:
        if lang:
            self.define(lang)

    def define(self, src: str, rcb: Callable | None = None, _frames_up: int = 0) -> None:
        raise RuntimeError(
            f"CompilationUnit cannot compile TorchScript source: {_NO_COMPILER}. Write the "
            "functions as Python functions and call them directly.")

    def find_function(self, name: str) -> None:
        return None

    def get_functions(self) -> list:
        return []


def is_scripting() -> bool:
    """False: nothing is compiled, so code never runs as TorchScript. (Inside a function
    compiled by torch.jit.script, torch's answer is True.)"""
    return False


def script(obj: Any, optimize: None = None, _frames_up: int = 0,
           _rcb: Callable[[str], Any] | None = None,
           example_inputs: list[tuple] | dict[Callable, list[tuple]] | None = None) -> Any:
    """torch.jit.script, run eagerly: gives `obj` itself back (a function, an nn.Module
    instance, a class, a dict or list), so it behaves exactly as the eager object."""
    warn_export_path("script")
    warn_optimize(optimize)
    if inspect.isclass(obj) and issubclass(obj, Module):
        # torch refuses this at script time too: the caller meant an instance
        raise RuntimeError(f"Type '{obj}' cannot be compiled since it inherits from nn.Module, "
                           "pass an instance instead")
    return obj


def script_method(fn: T) -> T:
    warn_export_path("script_method")
    return fn


def script_if_tracing(fn: T) -> T:
    """torch compiles `fn` when it is called under trace; tracing runs eagerly here, so `fn`
    is given back."""
    return fn


def interface(obj: T) -> T:
    warn_compile_path("interface")
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    return obj


def annotate(the_type: Any, the_value: T) -> T:
    """The type is for the TorchScript compiler; eagerly the value is the result."""
    return the_value
