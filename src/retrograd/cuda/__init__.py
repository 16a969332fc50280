"""retrograd.cuda: retrograd runs on the CPU, so CUDA is never available."""

from retrograd.cuda import amp

__all__ = ["amp", "device_count", "is_available"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0
