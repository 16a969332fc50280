"""Helpers shared by the nn.functional parity tests."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def pair(a: np.ndarray, requires_grad: bool = False):
    """The same array as a retrograd tensor and a torch tensor (separate copies)."""
    r = retrograd.from_numpy(np.array(a, copy=True)).requires_grad_(requires_grad)
    t = torch.from_numpy(np.array(a, copy=True)).requires_grad_(requires_grad)
    return r, t


def raises_like(fn_r, fn_t):
    """fn_r raises what fn_t raises on torch: same exception type and message."""
    with pytest.raises(Exception) as theirs:
        fn_t()
    with pytest.raises(type(theirs.value)) as ours:
        fn_r()
    assert str(ours.value) == str(theirs.value)
