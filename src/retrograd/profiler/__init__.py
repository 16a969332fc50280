"""retrograd.profiler: torch.profiler's API (profile with activities, schedules and trace
handlers) over the same recorder as retrograd.autograd.profiler."""

from retrograd.autograd.profiler import record_function
from retrograd.profiler import itt
from retrograd.profiler.profiler import (
    ProfilerAction,
    ProfilerActivity,
    _KinetoProfile,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "record_function", "itt"]
