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



def best_of_each(fns: dict, repeat: int = 7, number: int = 3) -> dict:
    """best_of for several contenders timed in alternation, so that a drift in the machine's
    state (BLAS threads waking, caches, other load) hits them alike."""
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / number)
    return best
