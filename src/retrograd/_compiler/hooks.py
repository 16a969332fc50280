"""Saved-tensor hooks inlined into compiled graphs (NOTE [Compiler pipeline], stage 4)."""

from __future__ import annotations

from typing import Any

from retrograd._autograd.state import state


def inlineable(pair: tuple) -> bool:
    """A (pack, unpack) pair of graph modules (objects with a `.graph` and a `.code`)."""
    return all(hasattr(h, "graph") and hasattr(h, "code") and callable(h) for h in pair)


def current_inlineable() -> tuple | None:
    stack = state.saved_hooks
    if stack and inlineable(stack[-1]):
        return stack[-1]
    return None


def inline_hooks(part: Any, hooks: tuple, primal_names: list, n_params: int,
                 n_fw: int) -> Any:
    raise NotImplementedError
