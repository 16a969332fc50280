"""Pipeline schedules with torch's names: GPipe, 1F1B, interleaved 1F1B, zero bubble.

Each schedule holds the action list of every rank (`pipeline_order`, printable and exportable
as CSV), checked for deadlock on a virtual clock before it runs. `step()` runs it: over MPI
when a process group is initialized (each rank passes its own stage(s)), otherwise in this
process when the stages passed cover the whole pipeline.
"""

from __future__ import annotations

from typing import Any

from retrograd.distributed.pipelining.schedules.actions import (
    Action,
    ComputationType,
    format_table,
    from_csv,
    to_csv,
)
from retrograd.distributed.pipelining.schedules.plan import (
    DeadlockError,
    Layout,
    add_communication,
    check_order,
    generate,
    simulate,
)

__all__ = ["PipelineScheduleSingle", "PipelineScheduleMulti", "ScheduleGPipe", "Schedule1F1B",
           "ScheduleInterleaved1F1B", "ScheduleInterleavedZeroBubble", "ScheduleZBVZeroBubble",
           "Action", "ComputationType", "DeadlockError", "Layout"]


class _Schedule:
    policy = "1f1b"
    style = "loop"
    stages_per_rank = 1

    def __init__(self, stages: Any, n_microbatches: int, loss_fn: Any = None,
                 scale_grads: bool = True, **kwargs: Any) -> None:
        from retrograd import distributed as dist

        stages = list(stages) if isinstance(stages, (list, tuple)) else [stages]
        if not stages:
            raise ValueError("a schedule needs at least one stage")
        self._stages = stages
        self._n_microbatches = n_microbatches
        self._loss_fn = loss_fn
        self.scale_grads = scale_grads
        num_stages = stages[0].num_stages
        self._distributed = dist.is_initialized()
        self._group = stages[0].group  # the pipeline's ranks (None: the world)
        if self._distributed:
            ranks = dist.get_world_size(self._group)
            self.stages_per_rank = max(1, num_stages // ranks)
        else:
            if len(stages) != num_stages:
                raise ValueError("without an initialized process group, pass every stage of the "
                                 "pipeline (they run in this process)")
            ranks = kwargs.get("num_ranks") or num_stages // self.stages_per_rank
            self.stages_per_rank = max(1, num_stages // ranks)
        if num_stages != ranks * self.stages_per_rank:
            raise ValueError(f"{type(self).__name__} needs {self.stages_per_rank} stage(s) per "
                             f"rank: {num_stages} stages on {ranks} ranks")
        self.layout = Layout(ranks, num_stages, self.style)
        # the most microbatches any rank holds activations for (its memory bound)
        self.in_flight_bound = self._limits(ranks)
        orders = generate(self.layout, n_microbatches, self.policy, self.in_flight_bound)
        self.pipeline_order = orders
        self.pipeline_order_with_comms = add_communication(self.layout, orders)
        check_order(self.pipeline_order_with_comms)
        self._timing = simulate(self.layout, self.pipeline_order_with_comms)

    def _limits(self, ranks: int) -> dict:
        return {r: self.layout.num_stages - r for r in range(ranks)}

    # --- inspection ---------------------------------------------------------------------------
    def __str__(self) -> str:
        return format_table(self.pipeline_order)

    def print_schedule(self, with_comms: bool = False) -> None:
        print(format_table(self.pipeline_order_with_comms if with_comms
                           else self.pipeline_order))

    def _export_csv(self, path: str, with_comms: bool = False) -> str:
        return to_csv(self.pipeline_order_with_comms if with_comms else self.pipeline_order,
                      path)

    def _load_csv(self, path: str) -> None:
        with open(path) as f:
            orders = from_csv(f.read())
        full = add_communication(self.layout, orders)
        check_order(full)
        self._timing = simulate(self.layout, full)
        self.pipeline_order, self.pipeline_order_with_comms = orders, full

    @property
    def virtual_makespan(self) -> int:
        return self._timing["makespan"]

    @property
    def peak_in_flight(self) -> dict:
        return self._timing["peak_in_flight"]

    # --- running ------------------------------------------------------------------------------
    def step(self, *args: Any, target: Any = None, losses: list | None = None,
             **kwargs: Any) -> Any:
        from retrograd.distributed.pipelining.microbatch import merge_chunks, split_batch
        from retrograd.distributed.pipelining.runtime import run_local, run_mpi

        m = self._n_microbatches
        chunks = split_batch(args[0], m) if args else [None] * m
        targets = split_batch(target, m) if target is not None else None
        for st in self._stages:
            st.clear()
            st.n_microbatches = m
        if self._distributed:
            from retrograd import distributed as dist

            rank = dist.get_rank(self._group)
            # pipeline rank -> world rank (point-to-point messages address world ranks)
            peers = None if self._group is None else dist.get_process_group_ranks(self._group)
            local = {st.stage_index: st for st in self._stages}
            run_mpi(rank, self.pipeline_order_with_comms[rank], local, self.layout, chunks,
                    targets, self._loss_fn, peers)
        else:
            by_rank: dict = {}
            for st in self._stages:
                by_rank.setdefault(self.layout.rank_of(st.stage_index), {})[st.stage_index] = st
            run_local(self.pipeline_order_with_comms, by_rank, self.layout, chunks, targets,
                      self._loss_fn)
        if self.scale_grads:
            for st in self._stages:
                for p in st.parameters():
                    if p.grad is not None:
                        p.grad._data /= m
        last = [st for st in self._stages if st.is_last]
        if last:
            st = last[0]
            if losses is not None:
                losses.extend(st.losses[i].detach() for i in range(m))
            outs = [st.outputs.get(i) for i in range(m)]
            if all(o is not None for o in outs):
                return merge_chunks(outs)
        return None


class PipelineScheduleSingle(_Schedule):
    """Schedules with one stage per rank."""


class PipelineScheduleMulti(_Schedule):
    """Schedules with several stages per rank."""

    stages_per_rank = 2


class ScheduleGPipe(PipelineScheduleSingle):
    policy = "gpipe"

    def _limits(self, ranks: int) -> dict:
        return {r: self._n_microbatches for r in range(ranks)}


class Schedule1F1B(PipelineScheduleSingle):
    policy = "1f1b"


class ScheduleInterleaved1F1B(PipelineScheduleMulti):
    policy = "1f1b"

    def _limits(self, ranks: int) -> dict:
        return {r: 5 + 2 * (ranks - 1 - r) for r in range(ranks)}


class ScheduleInterleavedZeroBubble(_Schedule):
    """Zero bubble with loop-style stages; one stage per rank gives ZB-H1 (in one process, pass
    num_ranks= for several stages per rank)."""

    policy = "zb"

    def _limits(self, ranks: int) -> dict:
        if self.stages_per_rank == 1:
            return {r: ranks - r for r in range(ranks)}
        return {r: 5 + (ranks - 1 - r) for r in range(ranks)}


class ScheduleZBVZeroBubble(PipelineScheduleMulti):
    """Zero bubble V: rank r holds stages r and 2p-1-r."""

    policy = "zb"
    style = "v"

    def _limits(self, ranks: int) -> dict:
        return {r: 2 * ranks for r in range(ranks)}
