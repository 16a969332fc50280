"""DistributedSampler: each rank of a data-parallel job reads its own share of a dataset.

The indices are (optionally shuffled by a generator seeded with seed + epoch, the same on every
rank), padded by repeating from the start so every rank gets the same count (or, with
drop_last, cut to a multiple of the number of ranks), and dealt round-robin: rank r takes
positions r, r + num_replicas, ...; so the ranks' shares together cover the dataset exactly once
(plus the padding).

The shuffle is torch's exactly: randperm with a generator seeded with seed + epoch draws
torch's permutation (NOTE [torch's random streams]).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any

from retrograd._ops.random import Generator, randperm
from retrograd.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[int]):
    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            import retrograd.distributed as dist

            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            missing = self.total_size - len(indices)
            if missing <= len(indices):
                indices += indices[:missing]
            else:
                indices += (indices * math.ceil(missing / len(indices)))[:missing]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        mine = indices[self.rank:self.total_size:self.num_replicas]
        assert len(mine) == self.num_samples
        return iter(mine)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """A new shuffle each epoch: call before creating the epoch's DataLoader iterator."""
        self.epoch = epoch
