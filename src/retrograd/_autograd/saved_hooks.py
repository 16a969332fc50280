"""The thread-local stack of default saved-tensor hooks (saved_tensors_hooks contexts)."""

from __future__ import annotations

from collections.abc import Callable

from retrograd._autograd.state import state


def default_hooks() -> tuple | None:
    """The (pack, unpack) pair that applies to a tensor saved now, or None."""
    stack = state.saved_hooks
    if not stack:
        return None
    if state.saved_hooks_disabled_msg is not None:
        raise RuntimeError(state.saved_hooks_disabled_msg)
    return stack[-1]


def push_hooks(pack: Callable, unpack: Callable) -> None:
    if state.saved_hooks_disabled_msg is not None:
        raise RuntimeError(state.saved_hooks_disabled_msg)
    state.saved_hooks = state.saved_hooks + ((pack, unpack),)


def pop_hooks() -> None:
    state.saved_hooks = state.saved_hooks[:-1]
