"""Timing helper shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 7, number: int = 200) -> float:
    """Seconds per call: the best of `repeat` timings of `number` calls (after one warm-up)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best
