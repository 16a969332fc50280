"""Pipeline-parallel training of an MLP on 4 processes, one stage per rank.

    python -m retrograd.distributed.run --nproc-per-node 4 examples/pipeline_train.py \
        [--schedule 1f1b|gpipe|zbh1] [--steps 30]

Each rank builds its own stage (Linear(64, 64) + tanh); the batch enters on rank 0, the loss is
computed on rank 3, and gradients flow back through the schedule. Rank 3 prints the loss.
"""

from __future__ import annotations

import argparse

import numpy as np

import retrograd as rg
import retrograd.distributed as dist
from retrograd import nn
from retrograd.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleavedZeroBubble,
)

SCHEDULES = {"1f1b": Schedule1F1B, "gpipe": ScheduleGPipe, "zbh1": ScheduleInterleavedZeroBubble}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--schedule", choices=sorted(SCHEDULES), default="zbh1")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--microbatches", type=int, default=8)
    args = p.parse_args()

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    rg.manual_seed(rank)
    stage_module = nn.Sequential(nn.Linear(64, 64), nn.Tanh())
    stage = PipelineStage(stage_module, rank, world)
    schedule = SCHEDULES[args.schedule](stage, args.microbatches, loss_fn=nn.MSELoss())
    opt = rg.optim.SGD(stage_module.parameters(), lr=2.0)

    rng = np.random.default_rng(0)  # every rank draws the same data; each uses its part
    teacher = rng.standard_normal((64, 64)) / 16
    for step in range(args.steps):
        x = rng.standard_normal((64, 64)).astype(np.float32)
        y = np.tanh(x @ teacher).astype(np.float32)
        losses: list = []
        opt.zero_grad()
        schedule.step(rg.from_numpy(x) if rank == 0 else None,
                      target=rg.from_numpy(y) if rank == world - 1 else None, losses=losses)
        opt.step()
        if rank == world - 1 and step % 5 == 0:
            print(f"step {step:3d}  loss {np.mean([float(v) for v in losses]):.5f}", flush=True)
    if rank == 0:
        print(f"{args.schedule}: {args.steps} steps on {world} ranks done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
