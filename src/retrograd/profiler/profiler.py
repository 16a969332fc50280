"""torch.profiler.profile: steps, a schedule of wait/warmup/active phases, and a handler called
when each active phase ends; recording is retrograd.autograd.profiler.profile's."""

from __future__ import annotations

import enum
import gzip
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterable
from typing import Any

from retrograd import _errors as E
from retrograd import _warning_site as _ws
from retrograd.autograd import profiler as prof
from retrograd.autograd.profiler_util import EventList


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set:
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable:
    """step -> ProfilerAction: skip `skip_first` steps, then cycles of `wait` idle steps,
    `warmup` steps and `active` recorded steps (the last one saves), `repeat` times (0: for
    ever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(E.PROFILER_SCHEDULE_ARGS.format(wait, warmup, active, repeat,
                                                             skip_first))
    if warmup == 0:
        _ws.warn(E.PROFILER_NO_WARMUP, stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait  # the first cycle starts without its wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if phase < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable:
    """An on_trace_ready handler writing `<worker>.<ns>.pt.trace.json[.gz]` into dir_name
    (TensorBoard's profiler plugin reads that directory); worker defaults to host_pid."""

    def handler_fn(profiler) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        profiler.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class _KinetoProfile:
    """Start/stop around an autograd profile, with torch.profiler's result methods."""

    def __init__(self, *, activities: Iterable | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, custom_trace_id_callback: Callable | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        self.activities = set(activities) if activities else supported_activities()
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.use_device = None
        self.profiler: prof.profile | None = None

    def start(self) -> None:
        self.prepare_trace()
        self.start_trace()

    def stop(self) -> None:
        self.stop_trace()

    def prepare_trace(self) -> None:
        if self.profiler is None or not self.acc_events:
            self.profiler = prof.profile(
                use_cpu=ProfilerActivity.CPU in self.activities,
                record_shapes=self.record_shapes, with_flops=self.with_flops,
                profile_memory=self.profile_memory, with_stack=self.with_stack,
                with_modules=self.with_modules, acc_events=self.acc_events)

    def start_trace(self) -> None:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        self.profiler.__enter__()

    def stop_trace(self) -> None:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self.profiler.__exit__(None, None, None)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """Write the trace as Chrome trace JSON; a path ending in .gz is gzipped."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        if not path.endswith(".gz"):
            self.profiler.export_chrome_trace(path)
            return
        with tempfile.TemporaryDirectory() as tmp:
            plain = os.path.join(tmp, "trace.json")
            self.profiler.export_chrome_trace(plain)
            with open(plain, "rb") as src, gzip.open(path, "wb") as dst:
                shutil.copyfileobj(src, dst)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        self.profiler.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def events(self) -> EventList:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        return self.profiler.function_events

    def add_metadata(self, key: str, value: str) -> None:
        pass  # retrograd's trace carries no user metadata


_STEP_PREFIX = "ProfilerStep#"


class profile(_KinetoProfile):
    """torch.profiler.profile: a context manager (or start/stop) whose `step()` moves through
    `schedule`; `on_trace_ready(prof)` runs at the end of each active phase."""

    def __init__(self, *, activities: Iterable | None = None, schedule: Callable | None = None,
                 on_trace_ready: Callable | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        if use_cuda is not None:
            _ws.warn("`use_cuda` is deprecated, use `activities` argument instead",
                     FutureWarning, stacklevel=2)
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config,
                         execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events,
                         custom_trace_id_callback=custom_trace_id_callback)
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn: prof.record_function | None = None
        A = ProfilerAction
        prepare, start, stop, ready = (self.prepare_trace, self.start_trace, self.stop_trace,
                                       self._trace_ready)
        # what to do when the action changes from one step to the next (None: the end)
        self.action_map = {
            (A.NONE, A.WARMUP): [prepare],
            (A.NONE, A.RECORD): [prepare, start],
            (A.NONE, A.RECORD_AND_SAVE): [prepare, start],
            (A.WARMUP, A.NONE): [self._warn("WARMUP", "NONE"), start, stop],
            (A.WARMUP, A.RECORD): [start],
            (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [self._warn("RECORD", "NONE"), stop],
            (A.RECORD, A.WARMUP): [self._warn("RECORD", "WARMUP"), stop],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prepare],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prepare, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prepare, start],
            (A.WARMUP, None): [start, stop],
            (A.RECORD, None): [stop, ready],
            (A.RECORD_AND_SAVE, None): [stop, ready],
        }

    @staticmethod
    def _warn(previous: str, current: str) -> Callable:
        return lambda: _ws.warn(f"Incorrect schedule: {previous} followed by {current}",
                                stacklevel=3)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        self.stop()

    def start(self) -> None:
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self._begin_step()

    def stop(self) -> None:
        self._end_step()
        self._transit_action(self.current_action, None)

    def step(self) -> None:
        """Mark the start of the next step (a training iteration)."""
        self._end_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(previous, self.current_action)
        if self.record_steps:
            self._begin_step()

    def _begin_step(self) -> None:
        self.step_rec_fn = prof.record_function(_STEP_PREFIX + str(self.step_num))
        self.step_rec_fn.__enter__()

    def _end_step(self) -> None:
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, previous, current) -> None:
        for action in self.action_map.get((previous, current), ()):
            action()
