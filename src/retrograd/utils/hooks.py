"""retrograd.utils.hooks: RemovableHandle, as torch.utils.hooks has it."""

from retrograd._autograd.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
