"""torch._C._autograd's public types."""

from retrograd._autograd.saved import SavedTensor

__all__ = ["SavedTensor"]
