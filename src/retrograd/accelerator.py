"""retrograd.accelerator: retrograd has no accelerator; everything runs on the CPU."""

from __future__ import annotations


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False) -> None:
    return None


def device_count() -> int:
    return 0
