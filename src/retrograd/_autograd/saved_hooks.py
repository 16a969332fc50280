"""The thread-local stack of default saved-tensor hooks (saved_tensors_hooks contexts).

NOTE [Composed hooks]
By default the innermost (pack, unpack) pair applies alone, as in PyTorch. A pair pushed with
compose=True is combined with the pair enclosing it: a saved tensor goes through the outer pack
first, and what that returns through the inner pack; unpacking runs the inner unpack, then the
outer unpack on its result. An outer float16 cast with an inner offload both apply, for example.
"""

from __future__ import annotations

from collections.abc import Callable

from retrograd._autograd.state import state


def default_hooks() -> tuple | None:
    """The (pack, unpack) pair that applies to a tensor saved now, or None."""
    stack = state.saved_hooks
    if not stack:
        return None
    if state.saved_hooks_disabled_msg is not None:
        raise RuntimeError(state.saved_hooks_disabled_msg)
    return stack[-1]


def push_hooks(pack: Callable, unpack: Callable, compose: bool = False) -> None:
    if state.saved_hooks_disabled_msg is not None:
        raise RuntimeError(state.saved_hooks_disabled_msg)
    stack = state.saved_hooks
    if compose and stack:
        outer_pack, outer_unpack = stack[-1]

        def pack(t, _inner=pack, _outer=outer_pack):
            return _inner(_outer(t))

        def unpack(p, _inner=unpack, _outer=outer_unpack):
            return _outer(_inner(p))

    state.saved_hooks = stack + ((pack, unpack),)


def pop_hooks() -> None:
    state.saved_hooks = state.saved_hooks[:-1]
