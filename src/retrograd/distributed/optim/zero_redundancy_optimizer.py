"""ZeroRedundancyOptimizer: each rank keeps the optimizer state of its own share of the
parameters only (torch.distributed.optim.ZeroRedundancyOptimizer, ZeRO stage 1).

The parameters of each group are dealt out largest first, each to the rank holding the fewest
elements so far (torch's greedy partition). Each rank runs a local `optimizer_class` over its
share; after its step every parameter is broadcast from the rank that owns it, so all replicas
stay equal. With gradients already averaged (DDP), the trajectory is the plain optimizer's.
consolidate_state_dict(to) gathers the shards on one rank, where state_dict() then gives the
state dict the plain optimizer would have.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import retrograd.distributed as dist
from retrograd.distributed._core import _member
from retrograd.nn.parallel.distributed import _broadcast_coalesced
from retrograd.optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]

NOT_CONSOLIDATED = ("Optimizer state has not been consolidated on this rank. Please call "
                    "`consolidate_state_dict(to=0)` on all ranks beforehand if you meant to "
                    "save the global state.")


class ZeroRedundancyOptimizer(Optimizer):
    def __init__(self, params: Any, optimizer_class: type[Optimizer], process_group: Any = None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False,
                 **defaults: Any) -> None:
        if overlap_with_ddp:
            raise NotImplementedError("overlap_with_ddp is not supported by retrograd's "
                                      "ZeroRedundancyOptimizer")
        super().__init__(params, defaults)
        pg = _member(process_group)
        if pg is None:
            raise ValueError("ZeroRedundancyOptimizer: this rank is not in the process group")
        self.process_group = process_group
        self._pg = pg
        self.world_size = pg.size()
        self.rank = pg.rank()
        self.global_rank = pg.ranks[self.rank]
        self._optimizer_class = optimizer_class
        self._defaults = defaults
        self._all_state_dicts: list | None = None
        self._consolidated_to: int | None = None
        self._partition()
        self.optim = optimizer_class(self._local_groups(), **defaults)

    # -- partition -----------------------------------------------------------------------------

    def _partition(self) -> None:
        """owner[id(p)] -> group rank; per rank, per group, the parameters it owns (in the
        group's order)."""
        self._owner: dict[int, int] = {}
        for group in self.param_groups:
            load = [0] * self.world_size
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                rank = load.index(min(load))
                self._owner[id(p)] = rank
                load[rank] += p.numel()

    def _owned(self, rank: int, group: dict) -> list:
        return [p for p in group["params"] if self._owner[id(p)] == rank]

    def _local_groups(self) -> list[dict]:
        return [{**{k: v for k, v in g.items() if k != "params"},
                 "params": self._owned(self.rank, g)} for g in self.param_groups]

    # -- step ----------------------------------------------------------------------------------

    def step(self, closure: Callable | None = None) -> Any:
        self._sync_hyperparameters()
        loss = self.optim.step(closure) if closure is not None else self.optim.step()
        for rank in range(self.world_size):
            owned = [p for g in self.param_groups for p in self._owned(rank, g)]
            _broadcast_coalesced(owned, self.process_group, src_group_rank=rank)
        return loss

    def _sync_hyperparameters(self) -> None:
        """Learning-rate schedulers change self.param_groups: the local optimizer follows."""
        for mine, local in zip(self.param_groups, self.optim.param_groups):
            for k, v in mine.items():
                if k != "params":
                    local[k] = v

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        if hasattr(self, "optim"):  # after construction: partition again, rebuild the shard
            self._partition()
            self.optim = self._optimizer_class(self._local_groups(), **self._defaults)

    # -- state ---------------------------------------------------------------------------------

    def _global_index(self) -> dict[int, int]:
        index: dict[int, int] = {}
        for g in self.param_groups:
            for p in g["params"]:
                index.setdefault(id(p), len(index))
        return index

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every rank's shard of the state on global rank `to` (every rank calls it)."""
        shards: list | None = [None] * self.world_size if self.global_rank == to else None
        dist.gather_object(self.optim.state_dict(), shards, dst=to, group=self.process_group)
        self._all_state_dicts = shards
        self._consolidated_to = to

    def state_dict(self) -> dict:
        if self._all_state_dicts is None or self._consolidated_to != self.global_rank:
            raise RuntimeError(NOT_CONSOLIDATED)
        index = self._global_index()
        state: dict = {}
        for rank, shard in enumerate(self._all_state_dicts):
            local = [p for g in self.param_groups for p in self._owned(rank, g)]
            for local_i, s in shard["state"].items():
                state[index[id(local[local_i])]] = s
        groups = []
        for g, local_group in zip(self.param_groups, self.optim.param_groups):
            packed = {k: v for k, v in local_group.items() if k != "params"}
            packed.update({k: v for k, v in g.items() if k != "params"})
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a full state dict (as state_dict() gives): each rank keeps its own shard."""
        index = self._global_index()
        for g, saved in zip(self.param_groups, state_dict["param_groups"]):
            g.update({k: v for k, v in saved.items() if k != "params"})
        local = [p for g in self.param_groups for p in self._owned(self.rank, g)]
        local_state = {i: state_dict["state"][index[id(p)]] for i, p in enumerate(local)
                       if index[id(p)] in state_dict["state"]}
        local_groups = []
        start = 0
        for g in self.param_groups:
            owned = self._owned(self.rank, g)
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = list(range(start, start + len(owned)))
            start += len(owned)
            local_groups.append(packed)
        self.optim.load_state_dict({"state": local_state, "param_groups": local_groups})
