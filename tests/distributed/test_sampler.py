"""DistributedSampler: torch's index order (the same shuffle for the same seed and epoch), and
shares that together cover the dataset exactly once plus the padding."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from torch.utils.data.distributed import DistributedSampler as TorchSampler

from retrograd.utils.data.distributed import DistributedSampler


@pytest.mark.parametrize("n,replicas", [(10, 3), (12, 4), (2, 4), (1, 2), (257, 4)])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [True, False])
def test_same_indices_as_torch(n, replicas, shuffle, drop_last):
    for epoch in (0, 1, 7):
        for rank in range(replicas):
            ours = DistributedSampler(range(n), replicas, rank, shuffle=shuffle, seed=3,
                                      drop_last=drop_last)
            theirs = TorchSampler(range(n), replicas, rank, shuffle=shuffle, seed=3,
                                  drop_last=drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)
            assert len(ours) == len(theirs)


@pytest.mark.parametrize("n,replicas", [(10, 3), (12, 4), (3, 4)])
def test_shares_cover_the_data_exactly_once(n, replicas):
    shares = [list(DistributedSampler(range(n), replicas, r, seed=1)) for r in range(replicas)]
    assert len({len(s) for s in shares}) == 1
    counts = Counter(i for s in shares for i in s)
    assert set(counts) == set(range(n))
    padding = len(shares[0]) * replicas - n
    assert sum(c - 1 for c in counts.values()) == padding
    dropped = [list(DistributedSampler(range(n), replicas, r, drop_last=True))
               for r in range(replicas)]
    flat = [i for s in dropped for i in s]
    assert len(flat) == len(set(flat)) == (n // replicas) * replicas


def test_epochs_shuffle_differently_and_bad_rank_is_torchs_error():
    s = DistributedSampler(range(50), 2, 0)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first
    message = r"Invalid rank 2, rank should be in the interval \[0, 1\]"
    with pytest.raises(ValueError, match=message):
        DistributedSampler(range(5), 2, 2)
    with pytest.raises(ValueError) as theirs:
        TorchSampler(range(5), 2, 2)
    assert "Invalid rank 2, rank should be in the interval [0, 1]" in str(theirs.value)
    assert torch is not None
