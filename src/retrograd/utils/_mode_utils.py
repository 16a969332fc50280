"""no_dispatch: run ops on tensors as plain tensors, bypassing every dispatch mode and the
__torch_dispatch__ of tensor subclasses."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from retrograd._ops import dispatch

__all__ = ["no_dispatch"]


@contextlib.contextmanager
def no_dispatch() -> Iterator[None]:
    local = dispatch._local
    prev, prev_forward, own = local.shared_hidden, local.forward_hidden, list(local.own)
    # every mode hidden, as each is while it runs an op: the forward-AD mode, the shared ones
    # (the subclass dispatcher is one) counted from the top, and this thread's own
    local.shared_hidden = len(dispatch.all_shared())
    local.forward_hidden = 1
    local.own.clear()
    try:
        yield
    finally:
        local.shared_hidden = prev
        local.forward_hidden = prev_forward
        local.own[:] = own
