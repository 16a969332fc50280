"""From a Recorder's ranges to results: the EventList of FunctionEvents, the Chrome trace."""

from __future__ import annotations

import json
import os

from retrograd._autograd import profiling
from retrograd.autograd.profiler_util import EventList, FunctionEvent


def to_events(recorder: profiling.Recorder, use_device: str | None, profile_memory: bool,
              with_flops: bool) -> EventList:
    """FunctionEvents from the recorded ranges, in start order, nested as they ran."""
    origin = recorder.start_ns
    ranges = sorted(recorder.ranges, key=lambda r: r.start_ns)
    events = EventList(use_device=use_device, profile_memory=profile_memory,
                       with_flops=with_flops)
    made: dict = {}
    for i, r in enumerate(ranges):
        end = r.end_ns or recorder.end_ns
        # torch.profiler's steps aggregate under one name; the trace keeps each step's
        name = "ProfilerStep*" if r.name.startswith("ProfilerStep#") else r.name
        evt = FunctionEvent(
            id=i, name=name, thread=r.thread, start_us=(r.start_ns - origin) / 1000,
            end_us=(end - origin) / 1000, fwd_thread=r.fwd_thread,
            input_shapes=r.input_shapes if r.input_shapes is not None else [],
            stack=r.stack if r.stack is not None else [], scope=r.scope,
            use_device=use_device, cpu_memory_usage=r.memory, sequence_nr=r.sequence_nr,
            flops=r.flops,
            trace_name=r.name, is_user_annotation=r.scope == profiling.USER_SCOPE)
        made[id(r)] = evt
        parent = r.parent
        while parent is not None and id(parent) not in made:
            parent = parent.parent
        if parent is not None:
            made[id(parent)].append_cpu_child(evt)
            evt.set_cpu_parent(made[id(parent)])
        events.append(evt)
    events._remove_dup_nodes()
    events._set_backward_stacktraces()
    events._tree_built = True
    return events


def write_chrome_trace(events: EventList, path: str, metadata: dict | None = None) -> None:
    """Chrome trace JSON: process and thread names, then one complete ("X") event per range
    with torch's categories and args."""
    pid = os.getpid()
    trace = [{"ph": "M", "name": "process_name", "ts": 0, "pid": pid, "tid": 0,
              "args": {"name": "python"}},
             {"ph": "M", "name": "process_labels", "ts": 0, "pid": pid, "tid": 0,
              "args": {"labels": "CPU"}}]
    for tid in sorted({evt.thread for evt in events}):
        trace.append({"ph": "M", "name": "thread_name", "ts": 0, "pid": pid, "tid": tid,
                      "args": {"name": f"thread {tid} (python)"}})
    for evt in events:
        args: dict = {"External id": evt.id, "Ev Idx": evt.id}
        if evt.sequence_nr >= 0:
            args["Sequence number"] = evt.sequence_nr
            args["Fwd thread id"] = evt.fwd_thread
        if evt.input_shapes:
            args["Input Dims"] = evt.input_shapes
        if evt.cpu_memory_usage:
            args["Allocated bytes"] = evt.cpu_memory_usage
        if evt.stack:
            args["Call stack"] = ";".join(evt.stack)
        trace.append({"ph": "X",
                      "cat": "user_annotation" if evt.is_user_annotation else "cpu_op",
                      "name": evt.trace_name or evt.name, "pid": pid, "tid": evt.thread,
                      "ts": evt.time_range.start, "dur": evt.time_range.elapsed_us(),
                      "args": args})
    document = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
                "traceEvents": trace, "traceName": path}
    if metadata:
        document.update(metadata)
    with open(path, "w") as f:
        json.dump(document, f)
