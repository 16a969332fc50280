"""torch.profiler.itt's API: retrograd emits no ITT annotations, so these do nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def is_available() -> bool:
    return False


@contextmanager
def range(msg: str, *args, **kwargs) -> Iterator[None]:  # noqa: A001 - torch's name
    yield


def range_push(msg: str) -> int:
    return 0


def range_pop() -> int:
    return 0


def mark(msg: str) -> None:
    return None
