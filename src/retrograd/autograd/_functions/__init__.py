"""torch.autograd._functions: legacy autograd Functions kept for old programs."""

from retrograd.autograd._functions.tensor import Resize

__all__ = ["Resize"]
