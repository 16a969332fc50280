"""retrograd.compile: capture a function or module as graphs and run generated NumPy code
(retrograd._compiler; NOTE [Compiler pipeline]).

A compiled module is the module itself, with its calls going through the compiled code: it
keeps its own state_dict keys (torch's wrapper prefixes them with "_orig_mod.").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd import _errors as E
from retrograd._compiler.tracing import is_disabled


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | Callable | None = "numpy",
            mode: str | None = None, options: dict | None = None, disable: bool = False,
            **kwargs: Any) -> Callable:
    """The compiled function or module; with no model, a decorator that compiles its argument.
    `backend` and `mode` are accepted for torch's signature: retrograd always generates NumPy
    code (an unknown backend name is torch's InvalidBackend). `dynamic=True`: the arguments'
    sizes are symbols, and one graph serves every size (NOTE [Dynamic shapes]); `None` (the
    default, as torch's automatic dynamic shapes): the first graph specializes, and a dimension
    whose size changes is a symbol from then on; `False`: one graph per shape. A function
    wrapped with retrograd.compiler.disable is handed back as it is."""
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, disable=disable, **kwargs)
    if not callable(model):
        raise AssertionError(E.COMPILE_NOT_CALLABLE.format(type(model)))
    from retrograd._compiler.backends import check

    check(backend)
    if disable or is_disabled(model):  # (retrograd.compiler.disable(fn): not compiled)
        return model
    from retrograd._compiler import compile_callable

    return compile_callable(model, fullgraph, None if dynamic is None else bool(dynamic),
                            backend)
