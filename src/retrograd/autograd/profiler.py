"""retrograd.autograd.profiler: torch's autograd profiler (profile, record_function).

Ops are timed by a dispatch mode (the one interception point, retrograd._ops.dispatch) that the
profiler pushes while it runs, backward nodes by the engine, user blocks by record_function; all
three record into one Recorder (NOTE [Profiling] in retrograd._autograd.profiling). Nothing is
added to any path while no profiler runs.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd import _errors as E
from retrograd import _warning_site as _ws
from retrograd._autograd import profiling
from retrograd._autograd.frames import GENERATED_PREFIX
from retrograd._autograd.state import state
from retrograd._tensor import Tensor
from retrograd.autograd import _profiler_composites
from retrograd.autograd._profiler_results import to_events, write_chrome_trace
from retrograd.autograd.profiler_util import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    _format_memory,
    _format_time,
)
from retrograd.utils._python_dispatch import TorchDispatchMode

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "EventList",
           "FunctionEvent", "FunctionEventAvg", "_format_time", "_format_memory"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# frames from these parts of retrograd and from its generated functions are machinery, not the
# user's code (with_stack)
_INTERNAL = tuple(os.path.join(_PACKAGE, p) for p in (
    "_ops", "_autograd", "_tensor.py", os.path.join("autograd", "profiler"),
    os.path.join("utils", "_python_dispatch.py"))) + (GENERATED_PREFIX,)


def kineto_available() -> bool:
    """retrograd has no Kineto; its own recorder serves every profiler API."""
    return False


def _profiler_enabled() -> bool:
    return profiling.active is not None


def _next_sequence_nr() -> int:
    from retrograd._autograd import node

    # the counter's next value without taking it (only while profiling)
    return int(repr(node._sequence)[6:-1])


def _shape_of(arg: Any) -> list:
    # a Tensor[] argument shows as [], as in torch's input_shapes
    return list(arg._data.shape) if isinstance(arg, Tensor) else []


def _tensors(value: Any) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, Tensor)]
    return []


def _root(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _allocated_bytes(args: tuple, out: Any) -> int:
    """Bytes of the arrays an op's outputs hold that none of its inputs did."""
    seen = {id(_root(t._data)) for a in args for t in _tensors(a)}
    total = 0
    for t in _tensors(out):
        root = _root(t._data)
        if id(root) not in seen:
            seen.add(id(root))
            total += root.nbytes
    return total


def _flops(name: str, args: tuple, out: Any) -> int:
    """Floating point operations as torch's profiler counts them (with_flops): a multiply and
    an add per term of a matrix product, one per output element of mul and add."""
    if name in ("mm", "bmm", "addmm", "baddbmm"):
        a, b = (args[0], args[1]) if name in ("mm", "bmm") else (args[1], args[2])
        shape_a, shape_b = a._data.shape, b._data.shape
        batch = shape_a[0] if name in ("bmm", "baddbmm") else 1
        return 2 * batch * shape_a[-2] * shape_a[-1] * shape_b[-1]
    if name in ("mul", "add") and isinstance(out, Tensor):
        return int(out._data.size)
    return 0


def _user_stack() -> list:
    """The Python stack outside retrograd's machinery, innermost first ("file(line): name")."""
    frames = []
    f = sys._getframe(2)
    while f is not None:
        filename = f.f_code.co_filename
        if not filename.startswith(_INTERNAL):
            frames.append(f"{filename}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return frames


class _ProfilingMode(TorchDispatchMode):
    """Times every op the dispatcher runs, as "aten::<name>"."""

    _all_threads = True  # the profiler records every thread's ops
    _keeps_no_results = True  # it times ops only (NOTE [Gradient ownership])

    def __init__(self, recorder: profiling.Recorder) -> None:
        self.recorder = recorder

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        rec = self.recorder
        op = func._op
        grad_mode = state.grad_enabled
        r = rec.begin("aten::" + op.schema.name)
        if rec.record_shapes:
            r.input_shapes = [_shape_of(a) for a in args]
        if rec.with_stack:
            r.stack = _user_stack()
        # torch numbers the ops that pass its autograd layer: the next sequence number, taken
        # by the node if the op makes one
        seq = _next_sequence_nr() if grad_mode else -1
        try:
            out = func(*args, **(kwargs or {}))
        finally:
            rec.end(r)
        if seq >= 0:
            r.sequence_nr = seq
            rec.fwd_threads.setdefault(seq, r.thread)
        if rec.with_flops:
            r.flops = _flops(op.schema.name, args, out)
        if rec.profile_memory:
            # an allocation counts in every range open around it (their totals include it)
            nbytes = _allocated_bytes(args, out)
            while r is not None:
                r.memory += nbytes
                r = r.parent
        return out


class profile:
    """Context manager that records ops, backward nodes and record_function blocks.

    Args mirror torch.autograd.profiler.profile; use_cuda/use_device, use_kineto, with_flops,
    with_modules and experimental_config are accepted (retrograd runs on the CPU).
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None,
                 acc_events: bool = False, custom_trace_id_callback: Callable | None = None,
                 post_processing_timeout_s: float | None = None,
                 activity_filters: dict | None = None) -> None:
        self.enabled = enabled
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            _ws.warn(E.PROFILER_USE_CUDA_DEPRECATED, FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device is not None:
            if use_device in ("cuda", "xpu", "hpu", "mtia"):
                name = use_device.upper()
                _ws.warn(E.PROFILER_DEVICE_UNAVAILABLE.format(name, name), stacklevel=2)
            else:
                _ws.warn(E.PROFILER_INVALID_DEVICE.format(use_device), stacklevel=2)
            self.use_cuda = False
            use_device = None
        self.use_device = use_device
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.experimental_config = experimental_config
        self.custom_trace_id_callback = custom_trace_id_callback
        self.entered = False
        self._recorder: profiling.Recorder | None = None
        self._mode: _ProfilingMode | None = None
        self._function_events: EventList | None = None
        self._old_function_events: EventList | None = None
        self._needs_processing = False

    def __enter__(self) -> profile | None:
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(E.PROFILER_NOT_REENTRANT)
        if profiling.active is not None:
            raise RuntimeError(E.PROFILER_ALREADY_ENABLED)
        self.entered = True
        self._recorder = profiling.Recorder(self.record_shapes, self.profile_memory,
                                            self.with_stack, self.with_flops)
        self._mode = _ProfilingMode(self._recorder)
        self._mode.__enter__()
        profiling.active = self._recorder
        _profiler_composites.install()  # NOTE [Profiled composites]
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        if not self.enabled:
            return False
        if profiling.active is self._recorder:
            profiling.active = None
            _profiler_composites.uninstall()
        self._mode.__exit__(None, None, None)
        self._recorder.stop()
        if self._function_events and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        self._needs_processing = True
        self.entered = False
        if self.acc_events:
            self._ensure_function_events()
        return False

    def __repr__(self) -> str:
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return E.PROFILER_UNFINISHED
        return repr(self._function_events)

    def __str__(self) -> str:
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return E.PROFILER_UNFINISHED
        return str(self._function_events)

    def _ensure_function_events(self) -> None:
        if self._function_events is not None and not self._needs_processing:
            return
        self._needs_processing = False
        self._function_events = to_events(self._recorder, self.use_device,
                                           self.profile_memory, self.with_flops)
        if self._old_function_events and self.acc_events:
            self._function_events.extend(self._old_function_events)
            self._old_function_events = None

    @property
    def function_events(self) -> EventList:
        self._ensure_function_events()
        return self._function_events

    def events(self) -> EventList:
        return self.function_events

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path: str, metadata: dict | None = None,
                            use_python_export: bool = False) -> None:
        """Write the trace as Chrome trace JSON (an object with "traceEvents", as torch's
        Kineto trace), for chrome://tracing, Perfetto or TensorBoard."""
        self._ensure_function_events()
        write_chrome_trace(self._function_events, path, metadata)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self) -> FunctionEventAvg:
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of every event's self CPU time (us)."""
        return self.function_events.self_cpu_time_total


class record_function:
    """Label a block (context manager) or every call of a function (decorator) in the profile.

    Ranges nest: ops and inner record_function blocks become its children."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._range: profiling.Range | None = None
        self._recorder: profiling.Recorder | None = None

    def __enter__(self) -> record_function:
        rec = profiling.active
        if rec is not None:
            r = rec.begin(self.name)
            r.scope = profiling.USER_SCOPE
            self._range, self._recorder = r, rec
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        r = self._range
        if r is not None and self.run_callbacks_on_exit:
            self._recorder.end(r)
        self._range = self._recorder = None

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            # a fresh range per call, so recursive and concurrent calls nest correctly
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped


class _RecordFunctionOps:
    """`ops.profiler`: record_function as a pair of calls, for code that cannot use a `with`
    block. The handle is the entered record_function (torch's is a tensor or a script object;
    either way it is only passed back to `_record_function_exit`)."""

    @staticmethod
    def _record_function_enter(name: str, args: str | None = None) -> record_function:
        return record_function(name, args).__enter__()

    @staticmethod
    def _record_function_enter_new(name: str, args: str | None = None) -> record_function:
        return record_function(name, args).__enter__()

    @staticmethod
    def _record_function_exit(handle: record_function) -> None:
        handle.__exit__(None, None, None)


_record_function_ops = _RecordFunctionOps()


class _annotation_context:
    """emit_itt / emit_nvtx: accepted and inert (retrograd has neither ITT nor NVTX)."""

    _reentrant_error = ""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(self._reentrant_error)
        self.entered = True
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        return False  # like torch's, an instance is entered once


class emit_itt(_annotation_context):
    _reentrant_error = E.ITT_NOT_REENTRANT


class emit_nvtx(_annotation_context):
    _reentrant_error = E.NVTX_NOT_REENTRANT
