"""retrograd.mps: there is no Metal device."""

from __future__ import annotations

from typing import Any


def _no_mps(what: str):
    def fail(*args: Any, **kwargs: Any):
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")

    return fail


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    int(seed)


def seed() -> None:
    pass


synchronize = _no_mps("deviceSynchronize")
empty_cache = _no_mps("emptyCache")
current_allocated_memory = _no_mps("getCurrentAllocatedMemory")
driver_allocated_memory = _no_mps("getDriverAllocatedMemory")
