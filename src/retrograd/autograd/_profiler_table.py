"""EventList.table: the profiler's summary table, laid out as torch prints it."""

from __future__ import annotations

import math

from retrograd.autograd.profiler_util import (
    EventList,
    _format_memory,
    _format_time,
    _format_time_share,
)

_COLUMN = 12  # width of every numeric column
_GAP = 2  # spaces after each column


def _in_unit(time_us: float, default: str, unit: str | None) -> str:
    if unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return default


def _flops_scale(flops: float) -> tuple:
    names = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
    level = int(max(0, min(math.log10(flops) / 3, float(len(names) - 1))))
    return 10 ** (-3.0 * level), names[level]


def _trim_path(path: str, width: int) -> str:
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                max_name_column_width=55, max_shapes_column_width=80, with_flops=False,
                profile_memory=False, top_level_events_only=False, time_unit=None) -> str:
    """The table of `events` (FunctionEvent or FunctionEventAvg): one row per entry."""
    if len(events) == 0:
        return ""
    use_device = events[0].use_device
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    has_overloads = any(e.overload_name is not None and len(e.overload_name) > 0
                        for e in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device") \
            .replace("privateuse1", "device")
        events = EventList(sorted(events, key=lambda e: getattr(e, attr), reverse=True),
                           use_device=use_device, profile_memory=profile_memory,
                           with_flops=with_flops)

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    stacks = [e.stack for e in events if e.stack is not None and len(e.stack) > 0]
    src_width = None
    if stacks:
        src_width = max(len(entry) for stack in stacks for entry in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name"] + (["Overload Name"] if has_overloads else [])
    headers += ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    with_node_id = any(e.node_id != -1 for e in events)
    if with_node_id:
        headers.append("Node ID")
    widths = [name_width] * (2 if has_overloads else 1)
    widths += [_COLUMN] * (len(headers) - len(widths))
    aligns = [">"] * len(widths)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    flops_scale = 1.0
    if with_flops:
        positive = [e.flops for e in events if e.flops and e.flops > 0]
        if positive:
            flops_scale, flops_name = _flops_scale(min(positive))
            headers.append(f"Total {flops_name}")
            widths.append(_COLUMN)
            aligns.append(">")
        else:
            with_flops = False
    if stacks:
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")

    row_format = "".join("{: " + a + str(w) + "}" + " " * _GAP for a, w in zip(aligns, widths))
    separator = "".join("-" * w + " " * _GAP for w in widths)
    line_length = sum(w + _GAP for w in widths) - _GAP
    total_self = sum(e.self_cpu_time_total for e in events)

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]

    shown = 0
    for evt in events:
        if shown == row_limit:
            break
        if top_level_events_only and evt.cpu_parent is not None:
            continue
        shown += 1
        name = evt.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        evt.self_cpu_percent = _format_time_share(evt.self_cpu_time_total, total_self)
        evt.total_cpu_percent = (0 if evt.is_async
                                 else _format_time_share(evt.cpu_time_total, total_self))
        row = [name]
        if has_overloads:
            overload = evt.overload_name
            if max_name_column_width is not None and len(overload) >= max_name_column_width - 3:
                overload = overload[:max_name_column_width - 3] + "..."
            row.append(overload)
        row += [evt.self_cpu_percent,
                _in_unit(evt.self_cpu_time_total, evt.self_cpu_time_total_str, time_unit),
                evt.total_cpu_percent,
                _in_unit(evt.cpu_time_total, evt.cpu_time_total_str, time_unit),
                _in_unit(evt.cpu_time, evt.cpu_time_str, time_unit)]
        if profile_memory:
            row += [_format_memory(evt.cpu_memory_usage),
                    _format_memory(evt.self_cpu_memory_usage)]
        row.append(evt.count)
        if with_node_id:
            row.append(evt.node_id)
        if has_shapes:
            row.append(str(evt.input_shapes)[:shapes_width])
        if with_flops:
            row.append("--" if not evt.flops or evt.flops <= 0
                       else f"{evt.flops * flops_scale:8.3f}")
        if stacks:
            row.append(_trim_path(evt.stack[0], src_width) if evt.stack else "")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in (evt.stack or [])[1:]:
                lines.append(row_format.format(*blank, _trim_path(entry, src_width)))
            lines.append(row_format.format(*blank, ""))
    lines.append(separator)
    lines.append("Self CPU time total: "
                 + _in_unit(total_self, _format_time(total_self), time_unit))
    return "".join(line + "\n" for line in lines)
