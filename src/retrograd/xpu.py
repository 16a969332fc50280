"""retrograd.xpu: there is no Intel GPU; queries answer so, seeding is accepted."""

from __future__ import annotations


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    int(seed)


def manual_seed_all(seed: int) -> None:
    int(seed)


def synchronize(device: object = None) -> None:
    """Nothing to wait for."""
