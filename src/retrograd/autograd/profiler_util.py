"""The profiler's results: FunctionEvent, FunctionEventAvg and EventList, with torch's names.

Times are in microseconds (floats: retrograd keeps the nanoseconds it measured), memory in bytes.
"""

from __future__ import annotations

import enum
import itertools
import json
from collections import defaultdict, namedtuple
from operator import attrgetter
from typing import Any

__all__ = ["EventList", "FormattedTimesMixin", "Interval", "Kernel", "FunctionEvent",
           "FunctionEventAvg", "StringTable", "DeviceType"]


class DeviceType(enum.IntEnum):
    CPU = 0
    CUDA = 1


def _format_time(time_us: float) -> str:
    """A time in microseconds as torch prints it: three decimals in s, ms or us."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_time_us: float) -> str:
    if total_time_us == 0:
        if time_us != 0:
            raise AssertionError(f"Expected time_us == 0 but got {time_us}")
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    """A byte count in B, KB, MB or GB (powers of 1024), as torch prints it."""
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes * 1.0 / size:.2f} {unit}"
    return f"{nbytes} B"


def _time_property(attr: str) -> property:
    return property(lambda self: _format_time(getattr(self, attr)))


class FormattedTimesMixin:
    """The *_str properties and per-call averages shared by events and averages."""

    cpu_time_str = _time_property("cpu_time")
    device_time_str = _time_property("device_time")
    cpu_time_total_str = _time_property("cpu_time_total")
    device_time_total_str = _time_property("device_time_total")
    self_cpu_time_total_str = _time_property("self_cpu_time_total")
    self_device_time_total_str = _time_property("self_device_time_total")

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else 1.0 * self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0 if self.count == 0 else 1.0 * self.device_time_total / self.count


class Interval:
    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


Kernel = namedtuple("Kernel", ["name", "device", "duration"])


class StringTable(defaultdict):
    def __missing__(self, key: str) -> str:
        self[key] = key
        return key


class FunctionEvent(FormattedTimesMixin):
    """One recorded range: an op, a backward node, or a record_function block."""

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float,
                 overload_name: str | None = None, fwd_thread: int | None = None,
                 input_shapes: list | None = None, stack: list | None = None, scope: int = 0,
                 use_device: str | None = None, cpu_memory_usage: int = 0,
                 device_memory_usage: int = 0, is_async: bool = False,
                 is_remote: bool = False, sequence_nr: int = -1, node_id: int = -1,
                 device_type: DeviceType = DeviceType.CPU, device_index: int = 0,
                 device_resource_id: int | None = None, is_legacy: bool = False,
                 flops: int | None = None, trace_name: str | None = None,
                 concrete_inputs: list | None = None, kwinputs: dict | None = None,
                 is_user_annotation: bool = False, is_python_function: bool = False,
                 structured_input_shapes: list | None = None, **_ignored: Any) -> None:
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels: list = []
        self.count = 1
        self.cpu_children: list = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes = input_shapes
        self.structured_input_shapes = structured_input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.is_python_function = is_python_function
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1

    def append_kernel(self, name: str, device: int, duration: float) -> None:
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child: FunctionEvent) -> None:
        """Add a direct child (only direct children, or self times come out wrong)."""
        if not isinstance(child, FunctionEvent):
            raise AssertionError("Expected child to be a FunctionEvent")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        if not isinstance(parent, FunctionEvent):
            raise AssertionError("Expected parent to be a FunctionEvent")
        self.cpu_parent = parent

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us() if self.device_type == DeviceType.CPU else 0

    @property
    def self_cpu_time_total(self) -> float:
        # async ranges have no children and count in nobody's self time
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def device_time_total(self) -> float:
        return 0  # retrograd runs on the CPU only

    @property
    def self_device_time_total(self) -> float:
        return 0

    @property
    def self_device_memory_usage(self) -> int:
        return 0

    @property
    def key(self) -> str:
        return self.name

    def __repr__(self) -> str:
        device = self.use_device
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
                f"device_type={self.device_type} node_id={self.node_id} "
                f"cpu_time={self.cpu_time_str} start_us={self.time_range.start} "
                f"end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"{device}_time={self.device_time_str} name={self.name} thread={self.thread} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"{device}_memory_usage={self.device_memory_usage} is_async={self.is_async} "
                f"is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(FormattedTimesMixin):
    """Totals over the events of one key (key_averages) or over all events (total_average)."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device: str | None = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.is_user_annotation = False
        self.flops = 0

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        if self.key is None:
            # the first event added gives the descriptive fields
            for name in ("key", "node_id", "is_async", "is_remote", "cpu_parent",
                         "cpu_children", "overload_name", "input_shapes", "stack", "scope",
                         "device_type", "is_legacy", "use_device", "is_user_annotation"):
                setattr(self, name, getattr(other, name))
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        device = self.use_device or "cuda"
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_{device}_time="
                f"{self.self_device_time_total_str} {device}_time={self.device_time_str} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"{device}_memory_usage={self.device_memory_usage}>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with tables, averages and trace export."""

    def __init__(self, *args: Any, use_device: str | None = None, profile_memory: bool = False,
                 with_flops: bool = False) -> None:
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False

    def _build_tree(self) -> None:
        self._populate_cpu_children()
        self._remove_dup_nodes()
        self._set_backward_stacktraces()
        self._tree_built = True

    def __str__(self) -> str:
        return self.table()

    def _remove_dup_nodes(self) -> None:
        """Fold an only child named like its parent into the parent (a range around one op of
        the same name counts once)."""
        while True:
            dropped = set()
            for i, evt in enumerate(self):
                parent = evt.cpu_parent
                if parent is not None and parent.name == evt.name and \
                        len(parent.cpu_children) == 1:
                    parent.cpu_children = evt.cpu_children
                    parent.kernels = evt.kernels
                    for child in evt.cpu_children:
                        child.cpu_parent = parent
                    dropped.add(i)
            if not dropped:
                return
            kept = [evt for i, evt in enumerate(self) if i not in dropped]
            self.clear()
            self.extend(kept)

    def _populate_cpu_children(self) -> None:
        """Make each event the child of the innermost event of its thread whose interval
        contains it; events that only overlap are not related."""
        sync = [e for e in self if not e.is_async and e.device_type == DeviceType.CPU]
        by_thread = itertools.groupby(sorted(sync, key=attrgetter("thread")),
                                      key=lambda e: (e.thread, e.node_id))
        for _, events in by_thread:
            ordered = sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end))
            open_events: list = []
            for evt in ordered:
                while open_events:
                    top = open_events[-1]
                    if evt.time_range.start >= top.time_range.end or \
                            evt.time_range.end > top.time_range.end:
                        open_events.pop()  # top ended before evt: it cannot be the parent
                        continue
                    top.append_cpu_child(evt)
                    if evt.cpu_parent is not None:
                        raise AssertionError(f"There is already a CPU parent event for {evt.key}")
                    evt.set_cpu_parent(top)
                    break
                open_events.append(evt)

    def _set_backward_stacktraces(self) -> None:
        """Events inside a backward node get the stack of the forward op that made it."""
        def backward_parent(evt):
            while evt is not None and evt.scope != 1:
                evt = evt.cpu_parent
            return evt

        forward_stacks: dict = {}
        for evt in self:
            if backward_parent(evt) is None and evt.stack is not None:
                forward_stacks.setdefault((evt.sequence_nr, evt.thread), evt.stack)
        for evt in self:
            node = backward_parent(evt)
            if node is not None:
                evt.stack = forward_stacks.get((node.sequence_nr, node.fwd_thread), [])

    @property
    def self_cpu_time_total(self) -> float:
        return sum(evt.self_cpu_time_total for evt in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The events as torch's table; sort_by is an attribute (self_cpu_time_total,
        cpu_time_total, cpu_memory_usage, count, ...), largest first."""
        from retrograd.autograd._profiler_table import build_table

        return build_table(self, sort_by=sort_by, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           profile_memory=self._profile_memory, with_flops=self._with_flops,
                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a JSON array of Chrome trace "X" (complete) events."""
        trace = [{"name": evt.trace_name, "ph": "X", "ts": evt.time_range.start,
                  "dur": evt.time_range.elapsed_us(), "tid": evt.thread,
                  "pid": "CPU functions", "args": {}}
                 for evt in self if evt.trace_name is not None]
        with open(path, "w") as f:
            json.dump(trace, f)

    def supported_export_stacks_metrics(self) -> list:
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path: str, metric: str) -> None:
        """Write "outer;...;inner value" lines (flame graph input) for events with stacks."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: "
                             + str(self.supported_export_stacks_metrics()))
        attr = metric.replace("cuda", "device").replace("xpu", "device") \
            .replace("privateuse1", "device")
        safe = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for evt in self:
                if evt.stack:
                    value = int(getattr(evt, attr))
                    if value > 0:
                        frames = ";".join(e.translate(safe) for e in reversed(evt.stack))
                        f.write(f"{frames} {value}\n")

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One FunctionEventAvg per event name (and input shapes / top stack entries /
        overload name when asked), in order of first appearance."""
        if not self._tree_built:
            raise AssertionError("Expected tree to be built before calling key_averages")
        stats: dict = defaultdict(FunctionEventAvg)
        for evt in self:
            key = [str(evt.key), str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_overload_name:
                key.append(str(evt.overload_name))
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += (evt.stack or [])[:group_by_stack_n]
            stats[tuple(key)].add(evt)
        averages = EventList(stats.values(), use_device=self._use_device,
                             profile_memory=self._profile_memory, with_flops=self._with_flops)
        for avg in averages:
            avg.stack = (avg.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return averages

    def total_average(self) -> FunctionEventAvg:
        """Sums over every event, under the key "Total"."""
        total = FunctionEventAvg()
        for evt in self:
            total += evt
            total.key = None
        total.key = "Total"
        return total


def __getattr__(name: str) -> Any:
    # emit_itt / emit_nvtx live in retrograd.autograd.profiler (as in torch); reachable here too
    if name in ("emit_itt", "emit_nvtx"):
        from retrograd.autograd import profiler

        return getattr(profiler, name)
    raise AttributeError(f"module 'retrograd.autograd.profiler_util' has no attribute '{name}'")
