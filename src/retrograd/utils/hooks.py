"""retrograd.utils.hooks: RemovableHandle, and the marking of hooks that saving a tensor drops
on purpose, as torch.utils.hooks has them."""

from collections.abc import Callable

from retrograd._autograd.hooks import UNSERIALIZABLE, RemovableHandle, warn_if_has_hooks

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f: Callable) -> Callable:
    """Mark a hook as not meant to be saved: saving a tensor that has it does not warn."""
    setattr(f, UNSERIALIZABLE, True)
    return f
