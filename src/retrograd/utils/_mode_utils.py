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
    prev, own = local.shared_hidden, list(local.own)
    # every mode hidden, as each is while it runs an op: the shared ones (the subclass
    # dispatcher is one) counted from the top, and this thread's own
    local.shared_hidden = sum(1 for m in dispatch.mode_stack if id(m) not in dispatch._entered)
    local.own.clear()
    try:
        yield
    finally:
        local.shared_hidden = prev
        local.own[:] = own
