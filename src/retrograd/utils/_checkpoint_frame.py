"""Non-reentrant checkpoint: the frame of one checkpointed call and its saved-tensor hooks.

NOTE [Nested checkpoint]
A tensor saved inside a checkpoint is owned by the innermost checkpoint only: its pack hook
keeps an empty _Holder and the tensor's metadata. A checkpoint's inputs are themselves saved
tensors (SavedVariable, so the enclosing checkpoint's hooks pack them), which makes unpacking
any saved tensor recompute every checkpoint around it, outermost first, each at most once per
backward (graph task). Recomputation starts as if no checkpoint were active; checkpoints met
while recomputing are honoured again.

Recomputation runs the function under hooks that hand each saved tensor, in saving order, to the
holder of the same position, keyed by the backward in progress. A holder's value is dropped as
soon as it is unpacked, even with retain_graph=True, so a second backward recomputes. With early
stop (the default) the recomputation is interrupted by an exception as soon as the last holder
has its value. Holders are weakly referenced by the frame: a part of the graph already freed (a
backward run inside the forward) is skipped.

NOTE [Stopping before the op]
torch's autograd layer saves an op's inputs before its kernel runs, and dispatch modes sit below
it; so when the tensors left to recompute are all inputs of the next op, early stop ends the
recomputation before that op runs or any mode sees it. retrograd's modes sit above the op and
inputs are saved after the forward, so during an early-stop recomputation a dispatch mode on
top of the stack (_StopBeforeOp) looks at each op first: if the first saves it would make are
the remaining tensors, all inputs, it saves them (filling the holders; the last one stops the
recomputation) instead of running the op.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from retrograd._autograd.saved import SavedVariable
from retrograd._autograd.state import state
from retrograd._ops import dispatch
from retrograd._ops.random import default_generator
from retrograd._tensor import Tensor
from retrograd.amp.autocast_mode import _replay as autocast_replay
from retrograd.amp.autocast_mode import _snapshot as autocast_snapshot
from retrograd.autograd.graph import current_graph_task_id, saved_tensors_hooks

DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""
COUNT_MISMATCH = (
    "torch.utils.checkpoint: A different number of tensors was saved during the original "
    "forward and recomputation.\nNumber of tensors saved during forward: {}\nNumber of tensors "
    "saved during recomputation: {}.\n" + DEBUG_TIP
)
METADATA_MISMATCH = (
    "torch.utils.checkpoint: Recomputed values for the following tensors have different "
    "metadata than during the forward pass.\n{}.\n" + DEBUG_TIP
)
SAVED_MORE = (
    "torch.utils.checkpoint: trying to save more tensors during recomputation than during the "
    "original forward pass.\n" + DEBUG_TIP
)
UNPACKED_TWICE = (
    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
    "once. {}If you are calling ctx.saved_tensors in backward, make sure to do so only once. "
    "Otherwise please open an issue with details on your use case."
)
GROUP_OVERLAP = (
    "Performing two backward calls that overlap (i.e. require the same saved activation in order "
    "to compute gradients) is not allowed while under the torch.utils.checkpoint.GraphExecGroup "
    "context. "
)
INTERNAL = (
    "Something went unexpectedly wrong in activation checkpoint. Please report this bug by "
    "filing an issue to PyTorch."
)
FORWARD_SUPPRESSED = (
    "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception "
    "raised during the checkpointed forward. This is not supported because checkpoint cannot "
    "return a value for a failed forward."
)
DEBUG_WITH_CONTEXT_FN = "debug=True is incompatible with non-default context_fn"


class CheckpointError(RuntimeError):
    pass


class _StopRecomputation(Exception):
    """Raised by the recomputation hooks once every needed tensor is back (early stop)."""


def noop_context_fn() -> tuple:
    return contextlib.nullcontext(), contextlib.nullcontext()


# global overrides (None: use the argument of checkpoint)
_early_stop_override: bool | None = None
_debug_override: bool | None = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Checkpoints whose forward runs inside stop recomputing early (or not): the setting is
    taken when the forward runs, backward may happen outside."""
    global _early_stop_override
    prev = _early_stop_override
    _early_stop_override = enable
    try:
        yield
    finally:
        _early_stop_override = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Force debug=True (or False) for every non-reentrant checkpoint run inside."""
    global _debug_override
    prev = _debug_override
    _debug_override = enabled
    try:
        yield
    finally:
        _debug_override = prev


class GraphExecGroup:
    """Backward calls under one instance recompute each checkpointed region at most once; they
    must not need the same saved activation."""

    _current: GraphExecGroup | None = None

    def __enter__(self) -> GraphExecGroup:
        if GraphExecGroup._current is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{GraphExecGroup._current}")
        GraphExecGroup._current = self
        return self

    def __exit__(self, *exc: Any) -> None:
        GraphExecGroup._current = None

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        return cls._current


def _internal_assert(cond: bool) -> None:
    if not cond:
        raise AssertionError(INTERNAL)


def _default_metadata(x: Tensor) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


METADATA_FNS: dict = {"default": _default_metadata, "none": lambda _: None}

_outside_ids = itertools.count(1)


def _current_gid() -> Any:
    group = GraphExecGroup._current
    if group is not None:
        return group
    gid = current_graph_task_id()
    # an unpack outside backward recomputes for itself
    return gid if gid != -1 else ("outside", next(_outside_ids))


class _Handle:
    __slots__ = ("__weakref__",)


class _Holder:
    """What the forward packs for a saved tensor: per backward, the handle of its value."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self) -> None:
        self.handles: dict = {}


class Frame:
    """One checkpointed call: how to recompute it and, per backward, what recomputation saved."""

    def __init__(self, recompute_fn: Callable, early_stop: bool, unpack_error_cb: Callable | None,
                 metadata_fn: Callable) -> None:
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.unpack_error_cb = unpack_error_cb
        self.metadata_fn = metadata_fn
        self.saved_args: list = []
        self.weak_holders: list = []
        self.x_metadatas: list = []
        self.recomputed: defaultdict = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: defaultdict = defaultdict(int)
        self.is_recomputed: defaultdict = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        self.recompute_pack: Callable | None = None  # the pack hook of the recomputation running
        self.recompute_gid: Any = None

    def save_inputs(self, args: tuple) -> None:
        # saved like any tensor, so an enclosing checkpoint's hooks own them
        self.saved_args = [SavedVariable(a, False) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self) -> list:
        return [a.unpack() if isinstance(a, SavedVariable) else a for a in self.saved_args]

    def recompute(self, gid: Any) -> None:
        inputs = self.get_inputs()
        prev = state.grad_enabled
        state.grad_enabled = True
        hooks = _recomputation_hooks(self, gid)
        outer = self.recompute_pack, self.recompute_gid, _stopping.mode
        self.recompute_pack, self.recompute_gid = hooks.pack_hook, gid
        _stopping.mode = _StopBeforeOp(self) if self.early_stop else None
        try:
            with hooks:
                self.recompute_fn(*inputs)
        except _StopRecomputation:
            pass
        finally:
            state.grad_enabled = prev
            self.recompute_pack, self.recompute_gid, _stopping.mode = outer
        self.is_recomputed[gid] = True
        self.check_recomputed_tensors_match(gid)

    def check_recomputed_tensors_match(self, gid: Any) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(COUNT_MISMATCH.format(len(self.weak_holders),
                                                        self.recomp_counter[gid]))
        different = ""
        for idx, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is None:
                continue
            handle = holder.handles.get(gid)
            _internal_assert(handle is not None and handle in self.recomputed[gid])
            saved_meta = self.x_metadatas[idx]
            new_meta = self.metadata_fn(self.recomputed[gid][handle])
            if saved_meta != new_meta:
                different += (f"tensor at position {idx}:\nsaved metadata: {saved_meta}\n"
                              f"recomputed metadata: {new_meta}\n")
        if different:
            raise CheckpointError(METADATA_MISMATCH.format(different))


def _recomputation_hooks(frame: Frame, gid: Any) -> saved_tensors_hooks:
    def pack(x: Tensor) -> Tensor:
        x = x.detach() if x.requires_grad else x
        idx = frame.recomp_counter[gid]
        frame.recomp_counter[gid] += 1
        if idx >= len(frame.weak_holders):
            _internal_assert(not frame.early_stop)
            if not frame.forward_completed:
                # backward inside the forward, without early stop: more is saved than so far
                frame.ignore_saved_mismatch = True
                return x
            raise CheckpointError(SAVED_MORE)
        holder = frame.weak_holders[idx]()
        if holder is not None:  # else that part of the graph is gone already
            _internal_assert(holder.handles.get(gid) is None)
            handle = holder.handles[gid] = _Handle()
            frame.recomputed[gid][handle] = x
        if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
            raise _StopRecomputation
        # kept as is: a backward through the recomputed graph (one run inside the function) uses
        return x

    return saved_tensors_hooks(pack, _identity)


def _identity(x: Tensor) -> Tensor:
    return x


class _Stopping(threading.local):
    mode: _StopBeforeOp | None = None  # the mode of the recomputation starting on this thread


_stopping = _Stopping()


def _stop_before_op() -> Any:
    # entered inside the recompute context, so above its modes, as torch's autograd layer is
    mode = _stopping.mode
    return mode if mode is not None else contextlib.nullcontext()


class _StopBeforeOp:
    """The dispatch mode of NOTE [Stopping before the op], active while a frame recomputes with
    early stop."""

    _internal = True  # not shown by _get_current_dispatch_mode

    def __init__(self, frame: Frame) -> None:
        self.frame = frame

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        frame = self.frame
        pack = frame.recompute_pack
        # (a user op saves in its setup_context, after its kernel: never stopped before it)
        if (pack is not None and not kwargs and func.__class__ is dispatch.OpOverload
                and state.saved_hooks
                and state.saved_hooks[-1][0] is pack and dispatch.autocast is None):
            gid = frame.recompute_gid
            remaining = len(frame.weak_holders) - frame.recomp_counter[gid]
            inputs = _inputs_saved_first(func._op, args, remaining)
            if inputs:
                for t in inputs:
                    SavedVariable(t, False)  # packs it; the last one stops the recomputation
                _internal_assert(False)
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> _StopBeforeOp:
        # the recomputing thread's own mode, so it sits above the user's modes
        # (NOTE [Per-thread dispatch modes])
        dispatch.push_mode(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        dispatch.pop_mode(self)


def _inputs_saved_first(op, args: tuple, n: int) -> list | None:
    """The input tensors an op call would save first, if its first `n` saves are all inputs
    (saved before its forward could run); else None."""
    from retrograd._ops.registry import _ARG_TENSOR, _OUTPUT

    if (n <= 0 or op.node_cls is None or op.inplace_idx or op.list_idx
            or not state.grad_enabled):
        return None
    mask = tuple(isinstance(args[i], Tensor) and args[i]._requires_grad for i in op.tensor_idx)
    if not any(mask):
        return None
    out: list = []
    for name in op.saved_plan(mask).names:
        kind, i = op._how_to_save(name)
        if kind == _OUTPUT:
            return None
        if kind == _ARG_TENSOR and isinstance(args[i], Tensor):
            out.append(args[i])
            if len(out) == n:
                return out
    return None


def checkpoint_hooks(frame: Frame) -> saved_tensors_hooks:
    def pack(x: Tensor) -> _Holder:
        holder = _Holder()
        frame.weak_holders.append(weakref.ref(holder))
        frame.x_metadatas.append(frame.metadata_fn(x))
        return holder

    def unpack(holder: _Holder) -> Tensor:
        gid = _current_gid()
        if not frame.is_recomputed[gid]:
            frame.recompute(gid)
        _internal_assert(gid in holder.handles)
        handle = holder.handles[gid]
        if handle is None:
            extra = GROUP_OVERLAP if GraphExecGroup._current is not None else ""
            raise CheckpointError(UNPACKED_TWICE.format(extra))
        _internal_assert(handle in frame.recomputed[gid])
        value = frame.recomputed[gid][handle]
        holder.handles[gid] = None
        return value

    if frame.unpack_error_cb is None:
        return saved_tensors_hooks(pack, unpack)

    def unpack_reporting(holder: _Holder) -> Tensor:
        try:
            return unpack(holder)
        except CheckpointError as e:
            frame.unpack_error_cb(e)
            raise

    return saved_tensors_hooks(pack, unpack_reporting)


def checkpoint_without_reentrant(fn: Callable, preserve_rng_state: bool, context_fn: Callable,
                                 determinism_check: str, debug: bool, early_stop: bool,
                                 args: tuple, kwargs: dict) -> Any:
    unpack_error_cb = None
    if _debug_override if _debug_override is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError(DEBUG_WITH_CONTEXT_FN)
        from retrograd.utils._checkpoint_debug import debug_context_and_callback

        context_fn, unpack_error_cb = debug_context_and_callback()
    metadata_fn = METADATA_FNS.get(determinism_check)
    if metadata_fn is None:
        raise ValueError(f"determinism_check should be one of {list(METADATA_FNS)}, but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    rng_state = default_generator.get_state() if preserve_rng_state else None
    autocast_state = autocast_snapshot()

    def recompute_fn(*inputs: Any) -> None:
        outer_rng = default_generator.get_state() if rng_state is not None else None
        if rng_state is not None:
            default_generator.set_state(rng_state)
        try:
            # the forward's autocast state, so recomputed tensors get the dtypes they had
            with autocast_replay(autocast_state), recompute_context, _stop_before_op():
                fn(*inputs, **kwargs)
        finally:
            if outer_rng is not None:
                default_generator.set_state(outer_rng)

    frame = Frame(recompute_fn,
                  _early_stop_override if _early_stop_override is not None else early_stop,
                  unpack_error_cb, metadata_fn)

    if not state.grad_enabled:
        return fn(*args, **kwargs)
    frame.save_inputs(args)
    failed = True
    with checkpoint_hooks(frame), forward_context:
        out = fn(*args, **kwargs)
        failed = False
    if failed:  # the forward context swallowed the function's exception
        raise RuntimeError(FORWARD_SUPPRESSED)
    frame.forward_completed = True
    return out
