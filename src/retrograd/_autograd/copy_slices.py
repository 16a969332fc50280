"""Rebasing history after in-place ops, CopySlices for in-place ops on views.

NOTE [In-place on a view]
`v = b[0]; v.mul_(y)` changes b too. For autograd, b becomes "b with slot 0 replaced by
b[0] * y": the base's grad_fn becomes a CopySlices node wrapping the op's node (MulBackward0).
In backward, CopySlices takes the gradient of the whole base, cuts out the view's part (by
as_strided geometry, or by replaying the recorded view ops; see `use_view_replay`), runs the
wrapped node on it, writes the result for the view's old value back into that part, and passes
the wrapped node's other gradients (for y) through. The view's own grad_fn is regenerated lazily
from the base's new history the next time it is read (views.view_grad_fn).
"""

from __future__ import annotations

import re

import numpy as np

from retrograd._autograd import op_seam
from retrograd._autograd import views as V
from retrograd._autograd.accumulate_grad import gradient_edge
from retrograd._autograd.anomaly import anomaly
from retrograd._autograd.node import CppNode, Node
from retrograd._autograd.saved import SavedVariable, saved_tensor
from retrograd._autograd.state import state
from retrograd._autograd.tensor_hooks import move_retains_grad
from retrograd._tensor import Tensor, _is_wrapper, _wrap


class ViewRecovery:
    """How a view of a gradient is recovered.

    By default (both flags off) CopySlices replays the recorded view ops when the chain is a
    few plain views (select, slice, narrow, transpose, ... -- cheaper than as_strided, whose
    backward PyTorch always takes: its issue 109237) and uses as_strided geometry otherwise; a
    view's regenerated grad_fn is AsStridedBackward0, as in PyTorch. `replay` forces replay
    everywhere (regenerated grad_fns then name the replayed op), `geometry` forces as_strided.
    Tests run the forced modes for every view op."""

    replay = False
    geometry = False


use_view_replay = ViewRecovery

MULTI_OUTPUT_VIEW = (
    "{} This view is the output of a "
    "function that returns multiple views. Such functions do not allow the output views to be "
    "modified inplace. You should replace the inplace operation by an out-of-place one."
)
NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "This view is the output of a function that returns multiple views. Given that this "
    "function can have its output views modified inplace, the result of this inplace update "
    "would be incorrect."
)
NO_GRAD_VIEW_SINGLE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
    "be tracked)."
)
NO_GRAD_VIEW_OF_VIEW = (
    "Output {} of {} is a view of a view which was created in no_grad mode and is being "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) "
    "or both outside (if you want the inplace to be tracked)."
)
INFERENCE_VIEW = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given "
    "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
    "by moving both the view and the inplace either both inside the inference_mode block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)
INFERENCE_VIEW_OF_VIEW = (
    "Output {} of {} is a view of a view which was created in inference mode and is being "
    "modified inplace in normal mode. Given that this use case is ambiguous and error-prone, it "
    "is forbidden. You can clarify your code by moving both the view and the inplace either "
    "both inside the inference_mode block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked)."
)
LEAF_VIEW_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
VIEW_NODE_PREFIX = "Output {} of {} is a view and is being modified inplace."
GRADLESS_VIEW_PREFIX = ("A view was created in no_grad mode and is being modified inplace with "
                        "grad mode enabled.")
CUSTOM_FN_VIEW = (
    "{} This view was created inside a "
    "custom Function (or because an input was returned as-is) and the autograd logic to handle "
    "view+inplace would override the custom backward associated with the custom Function, "
    "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning "
    "the output of the custom Function."
)


def check_view_inplace(t: Tensor) -> None:
    """The errors PyTorch raises for in-place ops on views it cannot rebase."""
    info = t._view
    base = info.base
    # torch checks how the view was made before the leaf: these two report that instead
    if base._grad_fn is None and base._requires_grad and info.creation_meta not in (
            V.NO_GRAD_MODE, V.IN_CUSTOM_FUNCTION):
        raise RuntimeError(LEAF_VIEW_INPLACE)
    if (info.creation_meta == V.DEFAULT and t._requires_grad and t._grad_fn is None
            and not base._requires_grad):  # the view itself made a leaf (requires_grad_())
        raise RuntimeError(LEAF_VIEW_INPLACE)
    meta = info.creation_meta
    if meta == V.MULTI_OUTPUT_NODE:
        raise RuntimeError(MULTI_OUTPUT_VIEW.format(_view_prefix(t)))
    if meta == V.NO_GRAD_MODE:
        if t._grad_fn is not None:
            raise RuntimeError(NO_GRAD_VIEW_OF_VIEW.format(t._output_nr, _op_name(t._grad_fn)))
        raise RuntimeError(NO_GRAD_VIEW_SINGLE)
    if meta == V.INFERENCE_MODE and not state.inference:
        if t._grad_fn is not None:
            raise RuntimeError(INFERENCE_VIEW_OF_VIEW.format(t._output_nr, _op_name(t._grad_fn)))
        raise RuntimeError(INFERENCE_VIEW)
    if meta == V.IN_CUSTOM_FUNCTION:
        raise RuntimeError(CUSTOM_FN_VIEW.format(_view_prefix(t)))


def _view_prefix(t: Tensor) -> str:
    """How torch's message starts: the view's node, or, with none (the view was made with grad
    mode off, or before its base required grad), the grad mode it was made in."""
    if t._grad_fn is None:
        return GRADLESS_VIEW_PREFIX
    return VIEW_NODE_PREFIX.format(t._output_nr, _op_name(t._grad_fn))


def rebase_custom_view(node: Node, view: Tensor, output_nr: int) -> None:
    """A custom Function wrote `view` in place (mark_dirty): its base's history becomes a
    CopySlices around the Function's node, as for a built-in in-place op on a view."""
    check_view_inplace(view)
    info = view._view
    base = info.base
    node._output_meta = ((view._data.shape, view._data.dtype),)
    base_edge = gradient_edge(base) if base._requires_grad else (None, 0)
    base._grad_fn = CopySlices(base, view, info.replay, node, base_edge)
    base._output_nr = 0
    if not base._requires_grad:
        base._requires_grad = True
        V.views_require_grad(base)
    view._requires_grad = True
    move_retains_grad(view, view._grad_fn, None)
    view._grad_fn = None
    view._output_nr = output_nr
    info.version = -1


def _op_name(fn) -> str:
    """torch 2.13 names the forward op in these messages: UnbindBackward0 -> Unbind."""
    if fn is None:
        return "a function"
    return re.sub(r"Backward\d*$", "", fn.name())


def rebase_history(op, self_t: Tensor, args: tuple, idx: int, holder: Tensor | None = None
                   ) -> None:
    """Make the in-place op's node the new history of self_t (or of its base, for a view).
    `holder`: what the wrapped node takes as its output for a view (a wrapper's alias, whose
    values its array does not hold); by default a plain tensor over self_t's array."""
    info = self_t._view
    if info is None or info.creation_meta == V.NO_GRAD_MODE:
        old_fn = self_t._grad_fn
        had_grad = self_t._requires_grad
        op_seam.build_node(op, args, (self_t,))
        move_retains_grad(self_t, old_fn, self_t._grad_fn)
        if info is None and not had_grad:
            V.views_require_grad(self_t)
        return
    base = info.base
    # the wrapped node: built as if for a plain tensor, but not attached to anything yet
    if holder is None:
        holder = _wrap(self_t._data)
    holder._version_counter = self_t._version_counter
    op_seam.build_node(op, args, (holder,))
    fn = holder._grad_fn
    fn._output_meta = ((self_t._data.shape, self_t._data.dtype),)
    base_edge = gradient_edge(base) if base._requires_grad else (None, 0)
    node = CopySlices(base, self_t, info.replay, fn, base_edge)
    base._grad_fn = node
    base._output_nr = 0
    if not base._requires_grad:
        base._requires_grad = True
        V.views_require_grad(base)
    # the view now requires grad; its grad_fn is regenerated on next read
    self_t._requires_grad = True
    move_retains_grad(self_t, self_t._grad_fn, None)
    self_t._grad_fn = None
    info.version = -1


WRAPPER_VIEW_WRITE_GRADGRAD = (
    "double backward through an in-place write into a view of a wrapper tensor subclass "
    "(a batched value under vmap) is not supported")


class CopySlices(CppNode):
    __slots__ = ("base_shape", "base_strides", "base_dtype", "view_size", "view_stride",
                 "view_offset", "view_replay", "fn")

    def __init__(self, base: Tensor, view: Tensor, replay: tuple, fn: Node,
                 base_edge: tuple) -> None:
        edges = (base_edge,) + tuple(fn.next_functions[1:])
        super().__init__(edges, ((base._data.shape, base._data.dtype),))
        self.base_shape = base._data.shape
        self.base_strides = base.stride()
        self.base_dtype = base._data.dtype
        self.view_size = view._data.shape
        self.view_stride = view.stride()
        self.view_offset = V.storage_offset(view) - 0
        self.view_replay = replay
        self.fn = fn
        self.metadata["wrapped_node"] = fn

    def apply(self, grad_outputs: list) -> tuple:
        grad = grad_outputs[0]
        if grad is None:
            return (None,) * len(self.next_functions)
        wrapper = grad.__class__ is not Tensor and _is_wrapper(grad)
        if not state.grad_enabled and not anomaly.enabled and not wrapper:
            return self._apply_arrays(grad)
        if wrapper:
            # its array holds no values (a batched gradient under vmap): the buffer is a copy
            # its class makes, and the view is reached by replaying the view ops
            result = grad.clone()
            grad_slice = self._replay_view(result) if self.view_replay else \
                self._view_of(result)
        else:
            result = op_seam.strided_like(grad, self.base_shape, self.base_strides)
            grad_slice = self._view_of(result)
        needed, fn_needed = self._needed()
        res = self._run_wrapped([grad_slice.clone()], fn_needed)
        if needed[0]:
            if res[0] is None:
                grad_slice.zero_()
            else:
                grad_slice.copy_(res[0])
        return self._outputs(needed, result, res)

    def _apply_arrays(self, grad: Tensor) -> tuple:
        """apply() when no graph is being built, on NumPy arrays: the same buffer, view,
        wrapped backward (its array formulas where it has them, NOTE [Array formulas]) and
        write as the Tensor path, without a Tensor op for each."""
        # a fresh buffer in the base's layout holding the incoming gradient
        buf = op_seam.buffer_strided(self.base_shape, self.base_strides, grad._data.dtype)
        np.copyto(buf, grad._data)
        view = self._view_array(buf)
        needed, fn_needed = self._needed()
        fn = self.fn
        grads = [_wrap(view.copy(order="K"))]
        res = fn._run(grads, False, fn_needed, False)
        if needed[0]:
            if res[0] is None:
                view[...] = 0
            else:
                np.copyto(view, res[0]._data, casting="unsafe")
        return self._outputs(needed, _wrap(buf), res)

    def _run_wrapped(self, grads: list, fn_needed: tuple) -> tuple:
        fn = self.fn
        if not fn._op_formulas:  # a custom Function's node computes what it computes
            return fn.apply(grads)
        if not state.grad_enabled:
            return fn.apply(grads, fn_needed)
        if self.metadata.get("wrapper_write"):
            # its saved output is the wrapper itself, which _outputs_as_views cannot re-view
            raise NotImplementedError(WRAPPER_VIEW_WRITE_GRADGRAD)
        saved = fn._saved
        fn._saved = self._outputs_as_views(saved)
        try:
            return fn.apply(grads, fn_needed)
        finally:
            fn._saved = saved

    def _outputs_as_views(self, saved: tuple) -> tuple:
        """NOTE [Saved outputs of an in-place op on a view]
        The wrapped node saved the view's new value (relu_'s result) as its own output, so
        unpacked it would have the wrapped node as grad_fn. But that value is a view of the
        base's new history: for a graph built in backward (double backward), it must lead to
        this CopySlices through an AsStridedBackward0, as the view's own grad_fn does, or
        the wrapped node would run twice (once by itself, once inside this node). Only while
        this node builds a graph, the saved output is handed over as such a view."""
        if not saved or not any(sv.__class__ is SavedVariable and not sv._original
                                and sv._data is not None and sv._hooks is None
                                and not sv._is_leaf for sv in saved):
            return saved
        holder = _wrap(op_seam.buffer_strided(self.base_shape, self.base_strides, self.base_dtype))
        holder._grad_fn = self
        holder._requires_grad = True
        view_fn = holder.as_strided(self.view_size, self.view_stride, self.view_offset)._grad_fn
        out = []
        for sv in saved:
            if sv.__class__ is SavedVariable and not sv._original and sv._data is not None \
                    and sv._hooks is None and not sv._is_leaf:
                t = _wrap(sv._data)
                t._version_counter = sv._vc
                t._grad_fn = view_fn
                t._requires_grad = True
                sv = saved_tensor(t, sv._version, False)  # as saved, version and all
            out.append(sv)
        return tuple(out)

    def _needed(self) -> tuple:
        """(edges that need a gradient, what the wrapped node must compute): the wrapped node
        must produce the view's gradient even where its own edge 0 is unused, when the base
        needs one (else its formula may lack the saved values, which are kept for what
        needed a gradient when the op ran)."""
        needed = tuple(nf is not None for nf, _ in self.next_functions)
        return needed, needed

    @staticmethod
    def _outputs(needed: tuple, base_grad: Tensor, res: tuple) -> tuple:
        """The base's gradient on edge 0, the wrapped node's other gradients after it."""
        out = [base_grad if needed[0] else None]
        out += [res[i] if needed[i] else None for i in range(1, len(needed))]
        return tuple(out)

    def _view_array(self, buf: np.ndarray) -> np.ndarray:
        """_view_of on a dense array: the recorded view ops' forwards, or the geometry."""
        if self._replays():
            for op, rest in self.view_replay:
                buf = op.forward(buf, *rest)
            return buf
        storage = V.root_storage(_wrap(buf))
        size = buf.itemsize
        return np.lib.stride_tricks.as_strided(
            storage[self.view_offset:], self.view_size, [st * size for st in self.view_stride])

    def _replays(self) -> bool:
        return use_view_replay.replay or self.base_shape == () or (
            not use_view_replay.geometry and _cheap_chain(self.view_replay))

    def _view_of(self, t: Tensor) -> Tensor:
        if self._replays():
            return self._replay_view(t)
        return t.as_strided(self.view_size, self.view_stride, self.view_offset)

    def _replay_view(self, t: Tensor) -> Tensor:
        for op, rest in self.view_replay:
            t = op_seam.run(op, (t,) + rest)
        return t

    def release_variables(self) -> None:
        self.fn.release_variables()


# view ops whose replay on a gradient costs less than an as_strided round trip
_CHEAP_VIEWS = frozenset({"select", "slice", "narrow", "transpose", "t", "permute", "unsqueeze",
                          "squeeze", "view", "alias", "diagonal"})


def _cheap_chain(chain: tuple) -> bool:
    return 0 < len(chain) <= 3 and all(op.schema.name in _CHEAP_VIEWS for op, _ in chain)


def regenerate_view_grad_fn(t: Tensor) -> None:
    """Give a view whose base changed in place a grad_fn that reads from the base's history."""
    info = t._view
    base = info.base
    if not base._requires_grad:
        info.version = t._version_counter.version
        return
    prev = state.grad_enabled
    state.grad_enabled = True
    try:
        if use_view_replay.replay:
            out = base
            for op, rest in info.replay:
                out = op_seam.run(op, (out,) + rest)
            fn = out._grad_fn
        else:
            out = base.as_strided(t._data.shape, t.stride(), t.storage_offset())
            fn = out._grad_fn
    finally:
        state.grad_enabled = prev
    move_retains_grad(t, t._grad_fn, fn)
    t._grad_fn = fn
    t._output_nr = 0
    t._requires_grad = True
    info.version = t._version_counter.version
