"""retrograd.compile: accepted everywhere torch.compile is, and runs the code eagerly.

retrograd has no graph compiler behind this name, so the model or function is handed back as it
is: training scripts that compile by default run unchanged, and a compiled module keeps its own
state_dict keys (torch's wrapper prefixes them with "_orig_mod.").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd import _errors as E


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | Callable | None = "inductor",
            mode: str | None = None, options: dict | None = None, disable: bool = False,
            **kwargs: Any) -> Callable:
    """The model or function itself; with no model, a decorator that returns its argument."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise AssertionError(E.COMPILE_NOT_CALLABLE.format(type(model)))
    return model
