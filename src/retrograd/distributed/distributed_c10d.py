"""torch.distributed.distributed_c10d: the module path programs and libraries import the
process-group API from (`from torch.distributed.distributed_c10d import _get_default_group`).
The names are retrograd.distributed's."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from retrograd.distributed import *  # noqa: F403
from retrograd.distributed import __all__ as _public
from retrograd.distributed._core import GroupMember, is_initialized

# torch's default timeout for a process group's operations
default_pg_timeout = timedelta(minutes=30)


def _get_default_group() -> Any:
    """The world group init_process_group made."""
    if not is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return GroupMember.WORLD


def _rank_not_in_group(group: Any) -> bool:
    """Whether this rank is outside `group` (None: the world, which holds every rank)."""
    return group is GroupMember.NON_GROUP_MEMBER


__all__ = list(_public) + ["default_pg_timeout"]
