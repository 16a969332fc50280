"""torch.overrides' dispatch helpers that apply to retrograd's __torch_dispatch__ subclasses."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from retrograd._autograd.state import state

__all__ = ["enable_reentrant_dispatch"]


@contextlib.contextmanager
def enable_reentrant_dispatch() -> Iterator[None]:
    """Inside a __torch_dispatch__, ops record a graph again as they would outside it (the
    handler runs below autograd, where they record none)."""
    prev = state.grad_enabled
    if state.dispatch_outer_grad is not None:
        state.grad_enabled = state.dispatch_outer_grad
    try:
        yield
    finally:
        state.grad_enabled = prev
