"""Pipeline schedules on 4 MPI ranks: wall-clock makespan and measured bubble fraction.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/pipeline.py

Launches itself under 4 ranks. Stages have equal cost (Linear + tanh, float32); microbatches 8.
The bubble fraction is 1 - (time a rank spends computing) / makespan, averaged over ranks, set
against the zero-bubble paper's formulas with F = I = W:
  1F1B   (p-1)(F+B) / (m(F+B) + (p-1)(F+B))          = (p-1)/(m+p-1)
  ZB-H1  (p-1)(F+B-W) / (m(F+B+W) + (p-1)(F+B-W))     = (p-1)/(3m+p-1)
ZBV's bubble is smaller still (two stages per rank, V-shaped).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

WIDTH, BATCH, M, REPEAT = 512, 256, 8, 5


class Layer:
    def __init__(self, seed: int) -> None:
        import retrograd as rg

        rng = np.random.default_rng(seed)
        self.w = rg.tensor((rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(
            np.float32), requires_grad=True)

    def __call__(self, x):
        return x.mm(self.w).tanh()

    def parameters(self):
        return [self.w]


def worker() -> None:
    import retrograd as rg
    import retrograd.distributed as dist
    from retrograd.distributed.pipelining import (
        PipelineStage,
        Schedule1F1B,
        ScheduleInterleavedZeroBubble,
        ScheduleZBVZeroBubble,
        runtime,
    )

    dist.init_process_group("mpi")
    rank, p = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    x = rg.tensor(rng.standard_normal((BATCH, WIDTH)).astype(np.float32))
    y = rg.tensor(rng.standard_normal((BATCH, WIDTH)).astype(np.float32))

    def loss_fn(out, target):
        d = out - target
        return (d * d).mean()

    results = {}
    for name, cls, n_stages in (("1F1B", Schedule1F1B, p),
                                ("ZB-H1", ScheduleInterleavedZeroBubble, p),
                                ("ZBV", ScheduleZBVZeroBubble, 2 * p)):
        mine = [s for s in range(n_stages)
                if (s if s < p else 2 * p - 1 - s) == rank] if n_stages > p else [rank]
        # equal cost per rank: with two stages per rank each stage does half the work
        layers = {s: Layer(s) for s in mine}
        stages = [PipelineStage(layers[s], s, n_stages) for s in mine]
        sched = cls(stages if len(stages) > 1 else stages[0], M, loss_fn=loss_fn)
        best = None
        for _ in range(REPEAT):
            runtime.timeline = []
            dist.barrier()
            t0 = time.perf_counter()
            sched.step(x if 0 in mine else None, target=y if n_stages - 1 in mine else None)
            dist.barrier()
            span = time.perf_counter() - t0
            busy = sum(e - s for _, s, e in runtime.timeline)
            for st in stages:
                for prm in st.parameters():
                    prm.grad = None
            if best is None or span < best[0]:
                best = (span, busy)
        span_t = rg.tensor([best[0]], dtype=rg.float64)
        dist.all_reduce(span_t, dist.ReduceOp.MAX)
        bubble_t = rg.tensor([1 - best[1] / span_t.item()], dtype=rg.float64)
        dist.all_reduce(bubble_t, dist.ReduceOp.AVG)
        results[name] = (span_t.item(), bubble_t.item(), sched.virtual_makespan)
    if rank == 0:
        print(f"4 ranks, {M} microbatches, stage = Linear({WIDTH}) + tanh on {BATCH}x{WIDTH}")
        print(f"{'schedule':8s} {'makespan ms':>12s} {'bubble':>7s} {'formula':>8s} "
              f"{'virtual makespan':>17s}")
        formula = {"1F1B": (p - 1) / (M + p - 1), "ZB-H1": (p - 1) / (3 * M + p - 1),
                   "ZBV": float("nan")}
        for name, (span, bubble, virt) in results.items():
            print(f"{name:8s} {span * 1e3:12.1f} {bubble:7.3f} {formula[name]:8.3f} {virt:17d}")
    dist.destroy_process_group()


def main() -> None:
    if os.environ.get("RETROGRAD_PIPELINE_BENCH_WORKER"):
        worker()
        return
    env = dict(os.environ, RETROGRAD_PIPELINE_BENCH_WORKER="1")
    sys.exit(subprocess.call([sys.executable, "-m", "retrograd.distributed.run",
                              "--nproc-per-node", "4", __file__], env=env))


if __name__ == "__main__":
    main()
