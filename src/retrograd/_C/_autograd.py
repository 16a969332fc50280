"""Private `torch._C._autograd` names: the saved-tensor type and a saved-tensor-hooks query."""

from __future__ import annotations

from retrograd._autograd.saved import SavedTensor
from retrograd._autograd.state import state

__all__ = ["SavedTensor", "_saved_tensors_hooks_is_enabled"]


def _saved_tensors_hooks_is_enabled() -> bool:
    """False inside disable_saved_tensors_hooks."""
    return state.saved_hooks_disabled_msg is None
