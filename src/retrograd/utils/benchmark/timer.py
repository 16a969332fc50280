"""Timer: times a Python statement (torch.utils.benchmark.Timer's API on the stdlib's timeit).

blocked_autorange first finds a number of runs per block that takes long enough to time
reliably, then times blocks until min_run_time is spent; adaptive_autorange keeps timing blocks
until the spread of the block times is small relative to their median (or max_run_time is
reached).
"""

from __future__ import annotations

import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from retrograd.utils.benchmark.measurement import Measurement, TaskSpec

_BLOCK_SECONDS = 0.01  # a block shorter than this is dominated by timer resolution


class Timer:
    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timeit.default_timer,
                 globals: dict[str, Any] | None = None, label: str | None = None,
                 sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1, language: Any = None) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if global_setup:
            exec(global_setup, self._globals)  # noqa: S102 - the caller's own setup code
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)

    def _run(self, number: int) -> float:
        return self._timer.timeit(number)

    @contextmanager
    def _threads(self) -> Iterator[None]:
        """Time with the Timer's thread count (NumPy's BLAS threads), restored after."""
        from retrograd._config import get_num_threads, set_num_threads

        before, wanted = get_num_threads(), self._task_spec.num_threads
        if before != wanted:
            set_num_threads(wanted)
        try:
            yield
        finally:
            if before != wanted:
                set_num_threads(before)

    def _measurement(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run the statement `number` times (after one warm-up run) as one measurement."""
        with self._threads():
            self._run(max(number // 100, 2))
            return self._measurement(number, [self._run(number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], None] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        target = min(_BLOCK_SECONDS, min_run_time / 10) if min_run_time > 0 else _BLOCK_SECONDS
        number = 1
        while True:
            if self._run(number) >= target or number >= 10**9:
                return number
            number *= 10

    def blocked_autorange(self, callback: Callable[[int, float], None] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        with self._threads():
            return self._blocked(callback, min_run_time)

    def _blocked(self, callback: Callable[[int, float], None] | None, min_run_time: float
                 ) -> Measurement:
        number = self._block_size(min_run_time)
        times: list[float] = []
        total = 0.0
        while total < min_run_time or not times:
            t = self._run(number)
            if callback is not None:
                callback(number, t)
            times.append(t)
            total += t
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], None] | None = None
                           ) -> Measurement:
        with self._threads():
            return self._adaptive(threshold, min_run_time, max_run_time, callback)

    def _adaptive(self, threshold: float, min_run_time: float, max_run_time: float,
                  callback: Callable[[int, float], None] | None) -> Measurement:
        number = self._block_size(0.1)
        times: list[float] = []
        total = 0.0
        while total < max_run_time:
            t = self._run(number)
            if callback is not None:
                callback(number, t)
            times.append(t)
            total += t
            if len(times) > 3 and total >= min_run_time:
                per_run = np.asarray(times) / number
                q1, median, q3 = np.quantile(per_run, [0.25, 0.5, 0.75])
                if median > 0 and (q3 - q1) / median < threshold:
                    break
        return self._measurement(number, times)
