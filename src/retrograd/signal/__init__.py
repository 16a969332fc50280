"""retrograd.signal, as torch.signal: window functions."""

from retrograd.signal import windows

__all__ = ["windows"]
