"""Selective activation checkpointing: a policy decides, op by op, what is saved vs recomputed.

Two dispatch modes share one storage. In the forward the caching mode runs each op, asks the
policy, and keeps a detached copy of the outputs of ops to save, keyed by (op, n-th call of that
op). During recomputation the cached mode hands those back in place of running the op, still
building the op's node so the recomputation saves what the forward saved; other ops run again.
A cached value is handed back once: a second backward over the region is an error.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from retrograd._ops.dispatch import OpOverload, OpOverloadPacket, method_overloads, replay
from retrograd._tensor import Tensor
from retrograd.utils._python_dispatch import TorchDispatchMode

MUTATED = "Tensor cached during selective activation checkpoint has been mutated"
BACKWARD_AGAIN = (
    "Trying to backward an extra time. You are only allowed to backward once on any region "
    "computed under selective activation checkpoint."
)
MISMATCH_TIP = (
    "This can happen if the operations in the checkpointed region are nondeterministic or "
    "depend on global state that changed between forward and backward."
)


class SelectiveCheckpointContext:
    """What the policy function is told besides the op: is_recompute (always False, the policy
    only runs in the forward) and the op's output."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
# torch's list: detach and the metadata queries are never cached (retrograd's modes do not even
# see them; wrapper subclasses do)
SAC_IGNORED_OPS: set = {ov for name in ("detach", "sym_size", "sym_stride", "sym_numel",
                                        "sym_storage_offset")
                        for ov in method_overloads[name].values()}


def _policy_from_bool(b: bool) -> CheckpointPolicy:
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


class _VersionWrapper:
    """A cached value and the version it had: a later in-place change is caught on reuse."""

    __slots__ = ("val", "version")

    def __init__(self, val: Any) -> None:
        self.val = val
        self.version = val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_cache_entry_mutation: bool) -> Any:
        if self.version is not None and not allow_cache_entry_mutation \
                and self.val._version != self.version:
            raise RuntimeError(MUTATED)
        return self.val


def _cacheable(func: OpOverload) -> bool:
    # a view of a recomputed tensor must alias that tensor, not the forward's: views (cheap)
    # always run again
    op = func._op
    return not op.is_view and not (op.inplace_idx and (op.multi or len(op.inplace_idx) > 1))


_RECOMPUTE = object()
_CONSUMED = object()


def _wrap_outputs(out: Any) -> Any:
    if isinstance(out, Tensor):
        return _VersionWrapper(out.detach())
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap_outputs(o) for o in out)
    return _VersionWrapper(out)


def _unwrap_outputs(entry: Any, allow: bool) -> Any:
    if isinstance(entry, _VersionWrapper):
        return entry.get_val(allow)
    return type(entry)(_unwrap_outputs(e, allow) for e in entry)


class _CachingTorchDispatchMode(TorchDispatchMode):
    """Forward: run each op, ask the policy, keep the outputs of ops to save."""

    def __init__(self, policy_fn: Callable, storage: dict) -> None:
        self.policy_fn = policy_fn
        self.storage = storage
        self.func_counter: defaultdict = defaultdict(int)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        out = func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in _SAVE and _cacheable(func):
            self.storage[func][idx] = _wrap_outputs(out)
        else:
            self.storage[func][idx] = _RECOMPUTE
        return out


class _CachedTorchDispatchMode(TorchDispatchMode):
    """Recomputation: hand back what the forward cached, run the rest again."""

    def __init__(self, policy_fn: Callable | None, storage: dict,
                 allow_cache_entry_mutation: bool = False) -> None:
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter: defaultdict = defaultdict(int)

    def __enter__(self) -> _CachedTorchDispatchMode:
        # each recomputation counts from zero (a second backward then finds consumed entries)
        self.func_counter.clear()
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        func_storage = self.storage.get(func)
        if func_storage is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. "
                               f"{MISMATCH_TIP}")
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward but "
                               f"not found in storage. {MISMATCH_TIP}")
        if entry is _CONSUMED:
            raise RuntimeError(BACKWARD_AGAIN)
        if entry is _RECOMPUTE:
            return func(*args, **kwargs)
        func_storage[idx] = _CONSUMED
        return replay(func, args, _unwrap_outputs(entry, self.allow_cache_entry_mutation))


def create_selective_checkpoint_contexts(policy_fn_or_list: Callable | list,
                                         allow_cache_entry_mutation: bool = False) -> tuple:
    """The (forward, recompute) contexts for checkpoint's context_fn: ops the policy marks
    MUST_SAVE/PREFER_SAVE (or the listed ops) are cached in the forward, not recomputed."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For "
                         "example, if you have `torch.ops.aten.mm`, change it to "
                         "`torch.ops.aten.mm.default`."
                         if isinstance(op, OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of "
                                 f"type {type(op)}. {extra}")
        ops_to_save = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            return (CheckpointPolicy.MUST_SAVE if op in ops_to_save
                    else CheckpointPolicy.PREFER_RECOMPUTE)
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: defaultdict = defaultdict(dict)
    return (_CachingTorchDispatchMode(policy_fn, storage),
            _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation))
