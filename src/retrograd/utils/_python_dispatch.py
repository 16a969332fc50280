"""TorchDispatchMode: intercept every op (see retrograd._ops.dispatch)."""

from __future__ import annotations

from typing import Any

from retrograd._ops import dispatch


class TorchDispatchMode:
    """Subclass and define __torch_dispatch__(func, types, args, kwargs); use as a context.

    Inside __torch_dispatch__ the mode itself is not active, so calling func(*args) runs the op
    (or the next mode down the stack).
    """

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self) -> TorchDispatchMode:
        dispatch.push_mode(self)  # NOTE [Per-thread dispatch modes]
        return self

    def __exit__(self, *exc: Any) -> None:
        dispatch.pop_mode(self)


def _get_current_dispatch_mode():
    # retrograd's own modes (checkpoint's early stop, the wrapper-subclass dispatcher) stand for
    # parts of torch that are not modes: users do not see them
    for mode in dispatch.visible_modes():
        if not getattr(mode, "_internal", False):
            return mode
    return None
