"""ZeroRedundancyOptimizer: each rank keeps optimizer state for its shard of the parameters.

The parameters are split across the ranks once, greedily: largest first, each to the rank whose
shard holds the fewest elements so far (per group, continuing the running totals, so old groups
keep their owners when a group is added). A step updates this rank's shard with a local
optimizer built from `optimizer_class`, then every parameter is broadcast from the rank that
owns it, so all ranks end the step with the same parameters and each holds 1/N of the state.

Optimizer state crosses ranks only in consolidate_state_dict, as a serialized object sent with
broadcasts (length first, then the bytes), so it needs no other collective.

`overlap_with_ddp=True` defers building the local optimizer until DistributedDataParallel's
gradient buckets are known: until then step() does nothing (with a warning) and the state-dict
methods raise, as torch's do. The hook that finishes that initialization belongs with
DistributedDataParallel's communication hooks.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from itertools import chain
from typing import Any

import numpy as np

import retrograd
from retrograd._tensor import Tensor
from retrograd.distributed import broadcast, get_rank, get_world_size
from retrograd.optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]

logger = logging.getLogger(__name__)

NOT_CONSOLIDATED = ("Optimizer state has not been consolidated on this rank. Please call "
                    "`consolidate_state_dict(to={rank})` on all ranks beforehand if you meant "
                    "to save the global state.")
NOT_INITIALIZED = ("This method should not be called until this ZeroRedundancyOptimizer "
                   "instance has been fully initialized")


def _is_trainable(param: Tensor) -> bool:
    return param.requires_grad


def _broadcast_object(obj: Any, src: int, group: Any) -> Any:
    """Send `obj` from rank `src` to every rank of the group (the others pass a placeholder)."""
    if get_rank(group) == src:
        buffer = io.BytesIO()
        retrograd.save(obj, buffer)
        payload = np.frombuffer(buffer.getbuffer(), np.uint8).copy()
        broadcast(retrograd.tensor([payload.size], dtype=retrograd.int64), src, group)
        broadcast(retrograd.from_numpy(payload), src, group)
        return obj
    length = retrograd.tensor([0], dtype=retrograd.int64)
    broadcast(length, src, group)
    data = retrograd.empty(int(length.item()), dtype=retrograd.uint8)
    broadcast(data, src, group)
    return retrograd.load(io.BytesIO(data.numpy().tobytes()), weights_only=False)


class ZeroRedundancyOptimizer(Optimizer):
    """Wraps `optimizer_class` so that each rank keeps the state of its shard of the parameters
    (torch.distributed.optim.ZeroRedundancyOptimizer).

    Args:
        params: tensors or parameter groups, the same on every rank.
        optimizer_class: the local optimizer's class (e.g. retrograd.optim.Adam).
        process_group: the group the parameters are sharded over (default: the world).
        parameters_as_bucket_view: keep each rank's shard in one flat tensor that the
            parameters are views of, so a shard is broadcast as one message.
        overlap_with_ddp: let DistributedDataParallel's gradient hooks run the steps.
        **defaults: the local optimizer's options (lr, ...).
    """

    def __init__(self, params: Any, optimizer_class: type[Optimizer], process_group: Any = None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False,
                 **defaults: Any) -> None:
        params = self._verify_and_init_params(params)
        self._verify_same_dense_param_type()
        # add_param_group behaves as the base class's until the shards exist
        self.initialized = False
        Optimizer.__init__(self, params, defaults)
        self._partition_cache: list[list[dict]] = []
        self._param_to_rank_cache: dict[Tensor, int] = {}
        self._is_trainable_mask = self._get_is_trainable_mask()
        self._default_device = self._all_params[0].device
        self.process_group = process_group
        self.world_size: int = get_world_size(process_group)
        self.rank: int = get_rank(process_group)
        self.global_rank: int = self.rank  # only the world group exists
        self._overlap_with_ddp = overlap_with_ddp
        self._overlap_initialized = False
        self._optim_defaults = defaults
        self._optim_constructor = optimizer_class
        if not overlap_with_ddp:
            self._init_local_optimizer()
        elif parameters_as_bucket_view:
            logger.warning("`parameters_as_bucket_view=True` will be ignored since "
                           "`overlap_with_ddp=True`; instead, a different bucketing "
                           "strategy will be used")
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._buckets: list[Tensor] = []
        self._build_param_buckets()
        # the consolidated per-rank states, filled on the target rank of consolidate_state_dict
        self._all_state_dicts: list[dict[str, Any]] = []
        self.initialized = True

    # --- checks on the arguments ------------------------------------------------------------
    def _verify_and_init_params(self, params: Any) -> list:
        if isinstance(params, Tensor):
            raise TypeError("`params` argument should be an iterable of Tensors, but got "
                            + retrograd.typename(params))
        try:
            all_params = list(params)
        except TypeError as e:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts, but "
                            "got " + retrograd.typename(params)) from e
        if len(all_params) == 0:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        all_tensors = all(isinstance(p, Tensor) for p in all_params)
        all_dicts = all(isinstance(p, dict) for p in all_params)
        if not all_tensors and not all_dicts:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        if all_tensors:
            self._all_params: list[Tensor] = all_params
        else:
            self._all_params = []
            for group in all_params:
                if "params" not in group:
                    raise ValueError("Each parameter group passed-in via `params` must have a "
                                     "'params' key mapping to the parameters in the group")
                self._all_params.extend(group["params"])
        return all_params

    def _verify_same_dense_param_type(self) -> None:
        first = retrograd.typename(self._all_params[0])
        if self._all_params[0].is_sparse:
            raise ValueError("ZeroRedundancyOptimizer only supports using the same dense type "
                             f"for all parameters but got {first}")
        for param in self._all_params[1:]:
            other = retrograd.typename(param)
            if other != first:
                raise ValueError("ZeroRedundancyOptimizer only supports using the same dense "
                                 f"type for all parameters but got both {first} and {other}")

    def _get_is_trainable_mask(self) -> list[bool]:
        return [_is_trainable(p) for p in self._all_params]

    def _check_overlap_initialized(self) -> None:
        if self._overlap_with_ddp and not self._overlap_initialized:
            raise RuntimeError(NOT_INITIALIZED)

    # --- the partition ----------------------------------------------------------------------
    def _clear_cache(self) -> None:
        self._partition_cache = []
        self._param_to_rank_cache = {}

    def _partition_parameters(self) -> list[list[dict]]:
        """For each rank, its param groups: copies of this optimizer's groups holding only the
        parameters that rank owns (possibly none)."""
        if not self._partition_cache:
            per_rank: list[list[dict]] = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for group in self.param_groups:
                owned: list[list[Tensor]] = [[] for _ in range(self.world_size)]
                # stable sort, so equal sizes keep their order on every rank
                for param in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                    rank = sizes.index(min(sizes))
                    owned[rank].append(param)
                    sizes[rank] += param.numel()
                for rank, params in enumerate(owned):
                    per_rank[rank].append(dict(group, params=params))
            self._partition_cache = per_rank
        return self._partition_cache

    @property
    def _param_to_rank(self) -> dict[Tensor, int]:
        if not self._param_to_rank_cache:
            for rank, groups in enumerate(self._partition_parameters()):
                for group in groups:
                    for param in group["params"]:
                        self._param_to_rank_cache[param] = rank
        return self._param_to_rank_cache

    @property
    def _index_to_param(self) -> list[Tensor]:
        return list(chain.from_iterable(g["params"] for g in self.param_groups))

    @property
    def _param_to_index(self) -> dict[Tensor, int]:
        return {p: i for i, p in enumerate(self._index_to_param)}

    def _init_local_optimizer(self) -> None:
        # the groups are passed as dicts, so a rank owning no parameter gets an optimizer over
        # empty groups instead of the empty-list error
        self.optim: Any = self._optim_constructor(self._partition_parameters()[self.rank],
                                                  **self._optim_defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)

    @staticmethod
    def _sync_param_groups(src: list[dict], dst: list[dict]) -> None:
        """Copy every option but 'params' (lr set by a scheduler, ...) from src to dst."""
        if len(src) != len(dst):
            raise AssertionError("Mismatch between number of source and destination parameter "
                                 "groups")
        for s, d in zip(src, dst):
            for key, value in s.items():
                if key != "params":
                    d[key] = value

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group on every rank (call it on all ranks): the new parameters are shared out
        after the old ones, which keep their owners."""
        if self.initialized and self._overlap_with_ddp:
            raise RuntimeError("ZeroRedundancyOptimizer with `overlap_with_ddp=True` only "
                               "supports a single parameter group")
        super().add_param_group(param_group)
        if self.initialized:
            self._clear_cache()
            mine = self._partition_parameters()[self.rank]
            if len(mine) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(mine[-1])
            if self.parameters_as_bucket_view:
                self._build_param_buckets()

    # --- buckets ----------------------------------------------------------------------------
    def _build_param_buckets(self) -> None:
        """One flat tensor per rank holding that rank's trainable parameters; the parameters
        become views of it, so the shard is broadcast as one message."""
        if not self.parameters_as_bucket_view or self._overlap_with_ddp:
            return
        self._buckets = []
        for groups in self._partition_parameters():
            params = [p for g in groups for p in g["params"]]
            trainable = [p for p in params if _is_trainable(p)]
            for p in params:
                if not _is_trainable(p):  # out of any old bucket, so it keeps its values
                    p.data = p.data.detach().clone()
            size = sum(p.numel() for p in trainable)
            if size == 0:
                self._buckets.append(retrograd.zeros(1, device=self._default_device))
                continue
            bucket = retrograd.empty(size, dtype=params[0].dtype, device=self._default_device)
            offset = 0
            for p in trainable:
                end = offset + p.numel()
                bucket[offset:end].copy_(p.data.flatten())
                p.data = bucket[offset:end].view_as(p.data)
                offset = end
            self._buckets.append(bucket)

    # --- stepping ---------------------------------------------------------------------------
    def _sync_params(self) -> None:
        """Broadcast every shard from its owner; all ranks end with the same parameters."""
        handles: list[Any] = []
        if self.parameters_as_bucket_view:
            for rank, bucket in enumerate(self._buckets):
                handles.append(broadcast(bucket, rank, self.process_group, async_op=True))
        else:
            for rank, groups in enumerate(self._partition_parameters()):
                for group in groups:
                    for param in group["params"]:
                        handles.append(broadcast(param.data, rank, self.process_group,
                                                 async_op=True))
        for handle in handles:
            handle.wait()

    def _local_step(self, closure: Callable | None = None, **kwargs: Any) -> Any:
        mask = self._get_is_trainable_mask()
        if mask != self._is_trainable_mask:
            if self._overlap_with_ddp:
                raise RuntimeError("ZeroRedundancyOptimizer with `overlap_with_ddp=True` does "
                                   "not support changing parameter trainability at run time")
            logger.warning("ZeroRedundancyOptimizer detected that the trainable parameters "
                           "changed; rebuilding the parameter buckets if enabled")
            self._build_param_buckets()
            self._is_trainable_mask = mask
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        if closure is None:
            loss = self.optim.step(**kwargs)
        else:
            loss = self.optim.step(closure=closure, **kwargs)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        return loss

    def step(self, closure: Callable | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Step this rank's shard, then share the updated parameters from their owners."""
        if self._overlap_with_ddp:
            logger.warning("`step()` should not be included in the training loop when "
                           "`overlap_with_ddp=True`")
            return None
        loss = self._local_step(closure, **kwargs)
        self._sync_params()
        return loss

    # --- state dicts ------------------------------------------------------------------------
    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every rank's local state on rank `to` (call it on all ranks)."""
        self._check_overlap_initialized()
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        self._all_state_dicts = []
        for rank in range(self.world_size):
            if rank == to:  # the target's own state does not travel
                if self.rank == to:
                    self._all_state_dicts.append(self.optim.state_dict())
                continue
            # torch sends each shard with a broadcast too, so every rank takes part in each
            local = self.optim.state_dict() if rank == self.rank else None
            received = _broadcast_object(local, rank, self.process_group)
            if self.rank == to:
                self._all_state_dicts.append(received)

    def state_dict(self) -> dict[str, Any]:
        """The global state last consolidated on this rank, indexed as an unsharded
        optimizer's."""
        self._check_overlap_initialized()
        if len(self._all_state_dicts) == 0:
            raise RuntimeError(NOT_CONSOLIDATED.format(rank=self.rank))
        state_dict = super().state_dict()
        index = self._param_to_index
        for rank, local in enumerate(self._all_state_dicts):
            local_groups = local["param_groups"]
            global_groups = self._partition_parameters()[rank]
            if len(local_groups) != len(global_groups):
                raise AssertionError("Mismatch between number of local and global parameter "
                                     "groups")
            for local_group, global_group in zip(local_groups, global_groups):
                if len(local_group["params"]) != len(global_group["params"]):
                    raise AssertionError("Mismatch between number of local and global "
                                         "parameters in parameter group")
                for local_index, param in zip(local_group["params"], global_group["params"]):
                    if local_index in local["state"]:
                        state_dict["state"][index[param]] = local["state"][local_index]
        state_dict["state"] = dict(sorted(state_dict["state"].items()))
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a global state_dict(): each rank keeps the state of the parameters it owns."""
        self._check_overlap_initialized()
        state_dict = dict(state_dict, state=dict(state_dict["state"]))
        params = self._index_to_param
        for index, value in state_dict["state"].items():
            param = params[index]
            if self._param_to_rank[param] != self.rank:
                state_dict["state"][index] = None  # another rank's: not kept here
            else:
                self.optim.state[param] = {k: v.clone() if isinstance(v, Tensor) else v
                                           for k, v in value.items()}
        super().load_state_dict(state_dict)
        self._sync_param_groups(state_dict["param_groups"], self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)

    @property
    def join_device(self) -> Any:
        return self._default_device

    @property
    def join_process_group(self) -> Any:
        return self.process_group
