"""Removable hook handles, the per-node hook tables, and the checks on what hooks return.

NOTE [Hook order]
When backward reaches a node: its tensor hooks (per output slot; a leaf's are read from the
tensor), then retains_grad, then the node's pre-hooks, the node itself, then its post-hooks.
For a leaf the node is AccumulateGrad: .grad is written (under the leaf's own lock, released
before any hook runs), then the leaf's post-accumulate-grad hooks run, then the node's
post-hooks, which see the gradient in their grad_outputs argument. Post-hooks registered while
their node runs (from an unpack hook, say) get an empty grad_outputs, as in PyTorch.
With autograd.grad(inputs=...), an input whose node does not run gets its tensor hooks applied
to the captured gradient; an input whose node also runs is captured before its hooks, which then
run once, with the node.

What a hook returns replaces the value it was given, and is checked at once (as PyTorch does):
a tensor of the same dtype and shape, for a slot that had a gradient; node hooks return a tuple
of the right length. Nothing is checked when a hook returns None.
"""

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

    # Pickled or deep-copied with the dicts it points to (a module's hook tables), the handle
    # points to the copies: removing it then removes the copied module's hook.
    def __getstate__(self) -> tuple:
        return (self.id, tuple(ref() for ref in self._dicts))

    def __setstate__(self, state: tuple) -> None:
        self.id, dicts = state
        self._dicts = tuple(weakref.ref(d if d is not None else HookDict()) for d in dicts)


class HookDict(dict):
    """A dict that can be weakly referenced (plain dicts cannot)."""

    __slots__ = ("__weakref__",)


def add_hook(table: dict, fn) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = fn
    return handle


class NodeHooks:
    """Hooks on one node, created the first time any hook is registered on it.

    Kept out of Node itself so that a node without hooks (nearly all) pays one None slot.
    Order of execution in backward: tensor_pre (per output slot), retains_grad, pre, the node,
    post; see NOTE [Hook order] above.
    """

    __slots__ = ("tensor_pre", "retains_grad", "pre", "post")

    def __init__(self) -> None:
        self.tensor_pre = HookDict()  # id -> (output_nr, fn)
        self.retains_grad: dict = {}  # output_nr -> fn
        self.pre = HookDict()  # id -> fn(grad_outputs)
        self.post = HookDict()  # id -> fn(grad_inputs, grad_outputs)


# --- checking what a hook returned -----------------------------------------------------------
# Only called once a hook has returned something other than None, so a graph without hooks (or
# with hooks that only observe) pays nothing for it.

NONE_REPLACED = "can't replace a None gradient with a non-None value"
POST_ACC_RETURNED = "Tensor post accumulate grad hooks should return None."


def hook_name(fn) -> str:
    return getattr(fn, "__name__", "<unknown>")


def check_tensor_result(fn, original, result):
    """A hook given one gradient `original` returned `result` (not None): it must be a tensor of
    the same dtype and shape, and may not fill a slot that had no gradient."""
    from retrograd._tensor import Tensor

    if original is None:
        raise RuntimeError(NONE_REPLACED)
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    a, b = original._data, result._data
    if a.dtype != b.dtype:
        raise RuntimeError(f"hook '{hook_name(fn)}' has changed the type of value (was "
                           f"{original.type()} got {result.type()})")
    if a.shape != b.shape:
        raise RuntimeError(f"hook '{hook_name(fn)}' has changed the size of value")
    return result


def check_tuple_result(fn, originals, result) -> list:
    """A node pre- or post-hook returned `result` (not None) in place of `originals`."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(originals):
        raise RuntimeError(f"hook '{hook_name(fn)}' has returned an incorrect number of values "
                           f"(got {len(result)}, but expected {len(originals)})")
    out = list(result)
    for i, value in enumerate(out):
        if value is not None:
            check_tensor_result(fn, originals[i], value)
    return out


UNSERIALIZABLE = "__torch_unserializable__"  # set by utils.hooks.unserializable_hook


def warn_if_has_hooks(tensor: Any) -> None:
    """Warn for each backward hook of `tensor` that saving it drops (hooks are not saved),
    unless the hook is marked unserializable."""
    from retrograd import _warning_site as _ws

    hooks = tensor._backward_hooks
    for hook in (hooks or {}).values():
        if not hasattr(hook, UNSERIALIZABLE):
            _ws.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                     "is expected, you can decorate the function with "
                     "@torch.utils.hooks.unserializable_hook to suppress this warning",
                     stacklevel=3)
