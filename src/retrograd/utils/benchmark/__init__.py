"""retrograd.utils.benchmark: Timer and Measurement with torch.utils.benchmark's API."""

from retrograd.utils.benchmark.measurement import Measurement, TaskSpec
from retrograd.utils.benchmark.timer import Timer

__all__ = ["Measurement", "TaskSpec", "Timer"]
