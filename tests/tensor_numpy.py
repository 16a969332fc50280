"""Converting tensors of either library to NumPy for value comparisons in tests."""

from __future__ import annotations

import numpy as np

_NARROW = ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def as_numpy(t) -> np.ndarray:
    """A tensor's values as an ndarray; bfloat16/float8 widened to float32 (NumPy and torch
    cannot compare them directly)."""
    if not hasattr(t, "_data"):  # a torch tensor
        t = t.detach()
        if str(t.dtype).replace("torch.", "") in _NARROW:
            return t.float().numpy()
        return t.numpy()
    a = t._data
    return a.astype(np.float32) if a.dtype.name in _NARROW else a
