"""`retrograd train --nproc-per-node N`: the main job trained data-parallel over MPI.

The command starts itself N times through retrograd's launcher (`python -m
retrograd.distributed.run`); each rank wraps the CNN in DistributedDataParallel and takes its
share of every batch. `--batch-size` stays the global batch: each step's indices are the ones a
single process would use, split across the ranks, and each rank's loss is weighted by its share,
so the averaged gradient is the single-process gradient and the run follows the same trajectory
(the accuracy matches one process up to float rounding). Rank 0 evaluates and prints; at the end
it reports every rank's throughput and the time each spent waiting on communication.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

WORKER_ENV = "RETROGRAD_TRAIN_WORKER"  # set in the ranks the command starts


def launch(nproc: int, argv: list[str]) -> int:
    """Start `retrograd train argv` on nproc ranks through the launcher; its exit code."""
    from retrograd.distributed import run

    main_py = str(Path(__file__).resolve().parent.parent / "__main__.py")
    os.environ[WORKER_ENV] = "1"
    try:
        return run.main(["--nproc-per-node", str(nproc), main_py, "train", *argv])
    finally:
        os.environ.pop(WORKER_ENV, None)


def is_worker() -> bool:
    return os.environ.get(WORKER_ENV) == "1"


class DataParallelRun:
    """One rank's part of a data-parallel training run."""

    def __init__(self) -> None:
        from retrograd import distributed as dist

        self.dist = dist
        if not dist.is_initialized():
            dist.init_process_group(backend="mpi")
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()
        self.samples = 0
        self.ddp: Any = None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def wrap(self, model: Any) -> Any:
        from retrograd.nn.parallel import DistributedDataParallel

        self.ddp = DistributedDataParallel(model)
        return self.ddp

    def shard(self, idx: np.ndarray) -> tuple[np.ndarray, float]:
        """This rank's indices of a global batch and the weight of its mean loss: its share of
        the batch times the world size, so that DDP's average of the weighted losses' gradients
        is the gradient of the global batch's mean loss."""
        mine = np.array_split(idx, self.world)[self.rank]
        self.samples += len(mine)
        return mine, len(mine) * self.world / max(len(idx), 1)

    def report(self, wall: float) -> list[dict]:
        """Every rank's throughput and communication wait, gathered on every rank."""
        wait = self.ddp.reducer.comm_wait_seconds if self.ddp is not None else 0.0
        mine = {"rank": self.rank, "images_per_second": self.samples / wall if wall else 0.0,
                "comm_wait_seconds": wait, "wall_seconds": wall}
        gathered: list[Any] = [None] * self.world
        self.dist.all_gather_object(gathered, mine)
        return gathered

    def close(self) -> None:
        self.dist.destroy_process_group()


def print_report(per_rank: list[dict]) -> None:
    for r in per_rank:
        share = r["comm_wait_seconds"] / r["wall_seconds"] * 100 if r["wall_seconds"] else 0.0
        print(f"rank {r['rank']}: {r['images_per_second']:.0f} img/s, waited "
              f"{r['comm_wait_seconds']:.2f}s on communication ({share:.1f}% of the run)")
    sys.stdout.flush()
