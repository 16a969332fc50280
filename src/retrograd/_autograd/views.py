"""Views: tensors that share storage with a base, and what autograd keeps about them.

A view's array is a NumPy view of its base's array, so writes through either are seen by both.
The view shares the base's version counter, and `_view` holds a ViewInfo: the root base (PyTorch's
`_base` is always the root, never an intermediate view), how the view was created (grad mode,
multi-output op, ...) and the chain of view ops from the root, for replaying the view on a
gradient of the base (see retrograd._autograd.copy_slices).
"""

from __future__ import annotations

import re
import weakref
from typing import TYPE_CHECKING

import numpy as np

from retrograd._autograd.state import state
from retrograd._fields import FieldTable
from retrograd._tensor import Tensor

MULTI_OUTPUT_STALE = (
    "Output {} of {} is a view and its base or another view of its base has been modified "
    "inplace. This view is the output of a function that returns multiple views. Such functions "
    "do not allow the output views to be modified inplace. You should replace the inplace "
    "operation by an out-of-place one."
)

NO_GRAD_STALE = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) "
    "or both outside (if you want the inplace to be tracked)."
)
INFERENCE_STALE = (
    "A view was created in inference mode and its base or another view of its base has been "
    "modified inplace in normal mode. Given that this use case is ambiguous and error-prone, it "
    "is forbidden. You can clarify your code by moving both the view and the inplace either "
    "both inside the inference_mode block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked)."
)

# How a view was created; decides which in-place ops on it are allowed (PyTorch's CreationMeta).
DEFAULT, NO_GRAD_MODE, MULTI_OUTPUT_NODE, INFERENCE_MODE, IN_CUSTOM_FUNCTION = range(5)
GRADLESS_VIEWS = (NO_GRAD_MODE, INFERENCE_MODE)  # made with grad mode off


class ViewChain:
    """The view ops from the root base to a view, as a linked list: a view of a view links to
    its parent's chain instead of copying it, so making a view costs O(1) time and memory
    however deep the nesting (a chain of n views holds n links, not n*(n+1)/2 steps).
    Iterating yields (opdef, args after self) from the root base outwards."""

    __slots__ = ("parent", "op", "args", "length")

    def __init__(self, parent, op, args: tuple) -> None:
        self.parent = parent or None  # () (no steps) and None both mean "from the root"
        self.op = op
        self.args = args
        self.length = 1 if self.parent is None else self.parent.length + 1

    def __len__(self) -> int:
        return self.length

    def __iter__(self):
        steps = []
        link = self
        while link is not None:
            steps.append((link.op, link.args))
            link = link.parent
        return reversed(steps)


class ViewInfo:
    __slots__ = ("base", "creation_meta", "replay", "version")

    if TYPE_CHECKING:
        def __init__(self, base: Tensor, creation_meta: int, replay: tuple, version: int) -> None:
            ...  # made from VIEW_INFO_FIELDS below


# NOTE [Field tables]: a view's ViewInfo, as make_views and the view fast path make it
VIEW_INFO_FIELDS = FieldTable(ViewInfo, "_VI", (
    ("base", "{base}", "the root base: PyTorch's _base is never an intermediate view"),
    ("creation_meta", "{creation_meta}", "how the view was made (NOTE [View creation meta])"),
    ("replay", "{replay}", "a ViewChain (or () for none): the view ops from the root base"),
    ("version", "{version}", "the base's version when the view's grad_fn was last set"),
), ("base", "creation_meta", "replay", "version"))
ViewInfo.__init__ = VIEW_INFO_FIELDS.constructor(  # type: ignore[method-assign]
    "__init__", "self, base, creation_meta, replay, version", target="self",
    qualname="ViewInfo.__init__")


def make_views(op, args: tuple, outs, build: bool) -> None:
    """Mark op outputs as views of args[0]: share its version counter, record the replay step."""
    src = args[0]
    info = src._view
    if info is not None:
        root, chain = info.base, info.replay
        meta = info.creation_meta
    else:
        root, chain, meta = src, None, DEFAULT
    # NOTE [View creation meta]
    # A view made with grad mode off (no_grad, inference mode) remembers it: writing it in
    # place with grad mode on is refused, and so is reading its grad_fn once its base was
    # written in place. Like PyTorch, such a view of a tensor that requires grad requires grad
    # itself, without a grad_fn; gradients flowing into it go nowhere (gradient_edge).
    no_grad = not state.grad_enabled
    if no_grad:
        meta = INFERENCE_MODE if state.inference else NO_GRAD_MODE
    elif len(outs) > 1 or op.multi:
        meta = MULTI_OUTPUT_NODE if meta == DEFAULT else meta
    vc = src._version_counter
    if vc is None:  # a view of an inference tensor is a plain inference tensor, as in torch
        for o in outs:
            o._version_counter = o._view = None
        return
    version = vc.version
    track = not src._requires_grad
    for o in outs:
        o._version_counter = vc
        o._view = ViewInfo(root, meta, ViewChain(chain, op, args[1:]), version)
        if no_grad and src._requires_grad:
            o._requires_grad = True
        if track:
            track_view(vc, o)


# NOTE [Views of a tensor that starts to require grad]
# `v = x.select(0, 1); x.add_(r)` with x a plain tensor and r requiring grad: x now requires
# grad, and so does v (its grad_fn is then regenerated from x's new history, AsStridedBackward0),
# so later ops on v build graph. Ops decide from the `_requires_grad` slot alone (the hot path
# reads nothing else), so the slot of every live view must be set at the moment x starts to
# require grad. The version counter, shared by x and its views, keeps weak references to the
# views made while x did not require grad (views of a tensor that requires grad require grad
# already), pruned as it grows; the in-place op that makes x require grad sets their slots.
PRUNE_AT = 64


def track_view(vc, view: Tensor) -> None:
    """Remember a view of a tensor that does not require grad (NOTE above)."""
    try:
        refs = vc.views
    except AttributeError:
        refs = vc.views = []
    refs.append(weakref.ref(view))
    n = len(refs)
    if n >= PRUNE_AT and n & (n - 1) == 0:  # at powers of two: amortized O(1), bounded size
        refs[:] = [r for r in refs if r() is not None]


def views_require_grad(t: Tensor) -> None:
    """t (a root base) now requires grad: so do the views made of it before."""
    vc = t._version_counter
    refs = getattr(vc, "views", None) if vc is not None else None
    if not refs:
        return
    vc.views = []
    for ref in refs:
        v = ref()
        if v is not None and not v._requires_grad and v._view is not None:
            v._requires_grad = True


def view_grad_fn(t: Tensor):
    """The view's grad_fn, regenerated if its base was modified in place since it was set."""
    info = t._view
    vc = t._version_counter
    if vc is not None and info.version != vc.version and t._requires_grad:
        if info.creation_meta in (NO_GRAD_MODE, INFERENCE_MODE) and t._grad_fn is None:
            raise RuntimeError(NO_GRAD_STALE if info.creation_meta == NO_GRAD_MODE
                               else INFERENCE_STALE)
        if info.creation_meta == MULTI_OUTPUT_NODE and info.base._requires_grad:
            fn = t._grad_fn
            name = "a function" if fn is None else re.sub(r"Backward\d*$", "", fn.name())
            raise RuntimeError(MULTI_OUTPUT_STALE.format(t._output_nr, name))
        from retrograd._autograd.copy_slices import regenerate_view_grad_fn

        regenerate_view_grad_fn(t)
    return t._grad_fn


def storage_offset(t: Tensor) -> int:
    info = t._view
    if info is None:
        return 0
    root = info.base._data
    start = root.__array_interface__["data"][0]
    return (t._data.__array_interface__["data"][0] - start) // t._data.itemsize


def root_storage(t: Tensor) -> np.ndarray:
    """A 1-d array over the storage of t's root base (for as_strided)."""
    root = t._view.base._data if t._view is not None else t._data
    meta = (t._view.base if t._view is not None else t)._meta
    if meta is not None and (meta.storage is not None or meta.storage_from is not None):
        # set_ / resize_ gave it more memory, or it is a detached view of a larger base
        from retrograd.storage import root_span

        return root_span(t)
    span = 1
    for size, st in zip(root.shape, root.strides):
        if size == 0:
            return np.empty(0, root.dtype)
        span += (size - 1) * (st // root.itemsize)
    return np.lib.stride_tricks.as_strided(root, shape=(span,), strides=(root.itemsize,))


def detach_inplace(t: Tensor) -> Tensor:
    if t._view is not None and t._requires_grad and t._view.creation_meta == DEFAULT:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
            "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
            "these gradients. To fix this "
            "error, please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py "
            "as the solution.")
    t._grad_fn = None
    t._output_nr = 0
    t._requires_grad = False
    t._grad_acc = None
    return t
