"""Measurement: the times of a benchmarked statement and their summary, printed as torch's."""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Any

import numpy as np

_UNITS = ((1e-9, "ns"), (1e-6, "us"), (1e-3, "ms"), (1.0, "s"))
# a spread this large relative to the median is reported as noise from the environment
_IQR_WARNING = 0.1


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What was timed: the statement, its setup, and the labels it is reported under."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        stmt = self.stmt if "\n" not in self.stmt else "stmt:\n" + textwrap.indent(self.stmt,
                                                                                  "  ")
        return stmt + (f": {self.sub_label}" if self.sub_label else "")

    def summarize(self) -> str:
        lines = [self.title]
        if self.description:
            lines.append(self.description)
        if self.setup.strip() and self.setup.strip() != "pass":
            setup = self.setup if "\n" not in self.setup else "\n" + textwrap.indent(
                self.setup, "  ")
            lines.append(f"setup: {setup}")
        return "\n".join(lines)


def _unit(seconds: float) -> tuple[float, str]:
    scale, name = _UNITS[0]
    for s, n in _UNITS:
        if seconds >= s:
            scale, name = s, n
    return scale, name


@dataclasses.dataclass
class Measurement:
    """raw_times: seconds for each block of `number_per_run` runs of the statement."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[str, Any] | None = None

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    @property
    def median(self) -> float:
        return float(np.median(self.times))

    @property
    def _quartiles(self) -> tuple[float, float]:
        q1, q3 = np.quantile(self.times, [0.25, 0.75])
        return float(q1), float(q3)

    @property
    def iqr(self) -> float:
        q1, q3 = self._quartiles
        return q3 - q1

    @property
    def has_warnings(self) -> bool:
        return len(self.times) >= 4 and self.median > 0 and \
            self.iqr / self.median > _IQR_WARNING

    def meets_confidence(self, threshold: float = _IQR_WARNING) -> bool:
        return self.median > 0 and self.iqr / self.median < threshold

    @property
    def significant_figures(self) -> int:
        """Figures of the median the spread of the measurements supports (1 to 4)."""
        n = len(self.times)
        if n < 2 or self.median == 0:
            return 4
        spread = float(np.std(self.times, ddof=1)) / np.sqrt(n)
        if spread == 0:
            return 4
        return int(min(4, max(1, np.floor(np.log10(self.median / spread)))))

    title = property(lambda self: self.task_spec.title)
    label = property(lambda self: self.task_spec.label)
    sub_label = property(lambda self: self.task_spec.sub_label)
    description = property(lambda self: self.task_spec.description)
    stmt = property(lambda self: self.task_spec.stmt)
    env = property(lambda self: self.task_spec.env)

    def __repr__(self) -> str:
        scale, unit = _unit(self.median)
        n = len(self.times)
        threads = f"{self.task_spec.num_threads} thread" + \
            ("s" if self.task_spec.num_threads > 1 else "")
        lines = [object.__repr__(self), self.task_spec.summarize()]
        if n == 1:
            lines.append(f"  {self.median / scale:.2f} {unit}")
            lines.append(f"  1 measurement, {self.number_per_run} runs , {threads}")
        else:
            q1, q3 = self._quartiles
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({q1 / scale:.2f} to "
                         f"{q3 / scale:.2f})")
            lines.append(f"  {n} measurements, {self.number_per_run} runs per measurement, "
                         f"{threads}")
        if self.has_warnings:
            lines.append(f"  WARNING: Interquartile range is {self.iqr / self.median:.1%} of "
                         f"the median measurement.\n           This suggests significant "
                         f"environmental influence.")
        return "\n".join(lines)
