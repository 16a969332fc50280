"""The join context manager: training with uneven inputs across ranks.

Without it, a rank that runs out of batches leaves the loop while the others still issue
collectives (DDP's bucket all-reduces) that wait for it forever. Inside `Join`, a rank that
ran out "joins": on leaving the loop it keeps answering the others' collectives with its
joinables' main hooks (DDP contributes zero gradients) until every rank has joined, then runs
their post hooks (DDP copies the final model from a rank that joined last).

The protocol is one all-reduce per iteration: each rank still training adds 1
(`notify_join_context`, called by the first joinable before its own collectives); a joined
rank adds 0 and learns how many ranks still train. When that count is 0 everyone has joined.
With throw_on_early_termination, a second all-reduce per iteration tells the training ranks
that some rank ran out, and every rank raises instead.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Any, NamedTuple

import retrograd
import retrograd.distributed as dist
from retrograd import _warning_site as _ws

__all__ = ["Join", "JoinHook", "Joinable"]

_SKEW_WARNING = 1000  # iterations a joined rank shadows before it warns about the skew


class JoinHook:
    """What a joinable does on a joined rank: main_hook once per iteration the other ranks
    still train (it must issue the collectives they issue), post_hook once all have joined."""

    def main_hook(self) -> None:
        """Shadow one iteration of the training ranks' collectives."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Clean up once every rank joined; is_last_joiner: this rank was among the last."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config() -> _JoinConfig:
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """A class whose instances can take part in `Join` (DistributedDataParallel is one)."""

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs: Any) -> JoinHook:
        """The hook that shadows this joinable's collectives once its rank joined."""

    @property
    @abstractmethod
    def join_device(self) -> Any:
        """The device of the join protocol's all-reduces."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of the join protocol's all-reduces."""


class Join:
    """Context manager for uneven inputs: `with Join([ddp_model]): for batch in mine: ...`."""

    def __init__(self, joinables: list, enable: bool = True,
                 throw_on_early_termination: bool = False, **kwargs: Any) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        first = True
        for joinable in joinables:
            joinable._join_config = _JoinConfig(enable, throw_on_early_termination, first)
            first = False
        group = device = None
        for joinable in joinables:
            if group is None:
                group = joinable.join_process_group
            elif group != joinable.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = joinable.join_device
        self._process_group = group
        self._rank = dist.get_rank(group)
        self._device = device

    def __enter__(self) -> None:
        return None

    def __exit__(self, type: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        """Shadow the other ranks' iterations until every rank joined, then run the post
        hooks. An exception leaving the block passes through untouched."""
        if not self._enable or type:
            return
        is_last_joiner = True
        shadowed = 0
        while True:
            if shadowed > _SKEW_WARNING:
                _ws.warn(f"Detected uneven input skew of greater than {_SKEW_WARNING}. "
                         f"This means that rank {self._rank} has at least "
                         f"{_SKEW_WARNING} fewer inputs than other currently-active "
                         "ranks. This level of skew could lead to performance "
                         "degradation during training.", stacklevel=2)
            if self._count_training_ranks() == 0:
                break
            if self._throw_on_early_termination:
                ones = retrograd.ones(1)
                dist.all_reduce(ones, group=self._process_group)  # tells the others
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            shadowed += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _count_training_ranks(self) -> int:
        """The number of ranks that have not joined (they each add 1 to this all-reduce)."""
        count = retrograd.zeros(1)
        dist.all_reduce(count, group=self._process_group)
        return int(count.item())

    @staticmethod
    def notify_join_context(joinable: Joinable) -> Any:
        """Tell the joined ranks that this rank still trains (from the first joinable, before
        its own collectives each iteration); the async all-reduce's work, or None. With
        throw_on_early_termination, raise on every training rank once some rank joined."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the "
                                 "``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        group = joinable.join_process_group
        work = dist.all_reduce(retrograd.ones(1), group=group, async_op=True)
        if config.throw_on_early_termination:
            joined = retrograd.zeros(1)
            dist.all_reduce(joined, group=group)
            if joined.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
