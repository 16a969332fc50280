"""new_subgroups / new_subgroups_by_enumeration: several disjoint groups made in one call
(every rank of the world calls it, as new_group requires), each rank getting its own."""

from __future__ import annotations

from typing import Any

from retrograd.distributed._core import (
    get_process_group_ranks,
    get_rank,
    get_world_size,
    new_group,
)

__all__ = ["new_subgroups", "new_subgroups_by_enumeration"]


def new_subgroups_by_enumeration(ranks_per_subgroup_list: list, timeout: Any = None,
                                 backend: Any = None, pg_options: Any = None,
                                 group_desc: str | None = None) -> tuple:
    """(this rank's subgroup or None, every subgroup) for the listed disjoint rank lists."""
    if ranks_per_subgroup_list is None or len(ranks_per_subgroup_list) == 0:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    me = get_rank()
    owner: dict = {}
    for ranks in ranks_per_subgroup_list:  # checked before any group is made
        for rank in ranks:
            if rank in owner:
                raise ValueError(f"Rank {rank} has appeared in both subgroup {owner[rank]} and "
                                 f"{ranks}")
            owner[rank] = ranks
    subgroups, mine = [], None
    for ranks in ranks_per_subgroup_list:
        subgroup = new_group(ranks=ranks, timeout=timeout, backend=backend,
                             pg_options=pg_options, group_desc=group_desc)
        subgroups.append(subgroup)
        if me in ranks:
            mine = subgroup
    return mine, subgroups


def new_subgroups(group_size: int | None = None, group: Any = None, timeout: Any = None,
                  backend: Any = None, pg_options: Any = None,
                  group_desc: str | None = None) -> tuple:
    """Split the world (or `group`) into consecutive subgroups of `group_size` ranks. torch's
    default is one subgroup per machine's GPU count, which is 0 here: give group_size."""
    if group_size is None:
        group_size = 0  # torch.cuda.device_count() on a machine without GPUs
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group=group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by '{group_size=}'")
    ranks = get_process_group_ranks(group) if group is not None else list(range(world_size))
    lists = [ranks[i:i + group_size] for i in range(0, world_size, group_size)]
    return new_subgroups_by_enumeration(lists, timeout=timeout, backend=backend,
                                        pg_options=pg_options, group_desc=group_desc)
