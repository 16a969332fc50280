"""Removable hook handles and the per-node hook tables."""

from __future__ import annotations

import itertools
import weakref
from typing import Any

_next_id = itertools.count()


class RemovableHandle:
    """Removes one hook from the dict(s) it was registered in; usable as a context manager."""

    __slots__ = ("id", "_dicts")

    def __init__(self, *hook_dicts: dict) -> None:
        self.id = next(_next_id)
        self._dicts = tuple(weakref.ref(d) for d in hook_dicts)

    def remove(self) -> None:
        for ref in self._dicts:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class HookDict(dict):
    """A dict that can be weakly referenced (plain dicts cannot)."""

    __slots__ = ("__weakref__",)


def add_hook(table: HookDict, fn) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = fn
    return handle


# NOTE [Hook order]
# In backward a node's hooks run in this order: the tensor hooks of its outputs
# (Tensor.register_hook, per output slot, in registration order), the retains_grad hook that
# fills a non-leaf's .grad, the node's pre-hooks (Node.register_prehook), the node itself, then
# its post-hooks (Node.register_hook), which see both its grad_inputs and grad_outputs.
# Post-accumulate-grad hooks of a leaf run once its .grad has been updated.


class NodeHooks:
    """Hooks on one node, created the first time any hook is registered on it.

    Kept out of Node itself so that a node without hooks (nearly all) pays one None slot.
    Order of execution in backward: tensor_pre (per output slot), retains_grad, pre, the node,
    post (NOTE [Hook order]).
    """

    __slots__ = ("tensor_pre", "retains_grad", "pre", "post")

    def __init__(self) -> None:
        self.tensor_pre = HookDict()  # id -> (output_nr, fn)
        self.retains_grad: dict = {}  # output_nr -> fn
        self.pre = HookDict()  # id -> fn(grad_outputs)
        self.post = HookDict()  # id -> fn(grad_inputs, grad_outputs)
