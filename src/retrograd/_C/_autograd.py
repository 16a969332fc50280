"""Private `torch._C._autograd` functions."""

from __future__ import annotations

from retrograd._autograd.state import state


def _saved_tensors_hooks_is_enabled() -> bool:
    """False inside disable_saved_tensors_hooks."""
    return state.saved_hooks_disabled_msg is None
