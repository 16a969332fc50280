"""The profiler: retrograd.autograd.profiler, profiler_util and retrograd.profiler.

Behaviour follows PyTorch's test_autograd.py profiler tests (test_profiler, test_record_function,
test_profiler_seq_nr, test_profiler_aggregation_*, test_profiler_function_event_avg,
test_profiler_shapes, ...); parity tests run the same program under torch's profiler.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections import Counter

import pytest

import retrograd
from retrograd._autograd import profiling
from retrograd._ops import dispatch
from retrograd.autograd.profiler import emit_itt, emit_nvtx, profile, record_function
from retrograd.autograd.profiler_util import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    _format_memory,
    _format_time,
)

ENGINE = "autograd::engine::evaluate_function: "


# inputs made outside the profiled blocks: factories inside one are profiled too
_ONES = {n: retrograd.ones(n) for n in (1, 2, 3, 4)}

def _names(events) -> list:
    return [e.name for e in events]


# --- what is recorded --------------------------------------------------------------------------


def test_profiler_records_ops_and_enabled_flag():
    x = retrograd.randn(10, 10)
    assert not retrograd.autograd._profiler_enabled()
    with profile(use_kineto=retrograd.autograd.kineto_available()) as p:
        assert retrograd.autograd._profiler_enabled()
        x * 2 + 4
    assert not retrograd.autograd._profiler_enabled()
    assert _names(p.function_events) == ["aten::mul", "aten::add"]


def test_nothing_stays_installed_after_profiling():
    with profile():
        assert len(dispatch.mode_stack) == 1
        assert profiling.active is not None
    assert dispatch.mode_stack == []
    assert profiling.active is None


def test_profile_disabled_records_nothing():
    p = profile(enabled=False)
    with p as entered:
        assert entered is None
        assert dispatch.mode_stack == []
        retrograd.ones(2) * 2


def test_profiler_not_reentrant_and_not_nested():
    p = profile()
    with p, pytest.raises(RuntimeError, match="Profiler context manager is not reentrant"):
        p.__enter__()
    with profile(), pytest.raises(RuntimeError, match="Profiler is already enabled"):
        with profile():
            pass
    assert profiling.active is None


def test_profiler_seq_nr_and_backward_nodes():
    with profile() as p:
        x = retrograd.randn(10, 10, requires_grad=True)
        y = retrograd.randn(10, 10, requires_grad=True)
        z = x + y
        s = z.sum(dim=None)
        s.backward()
    found = {("aten::add", "Add"): [], ("aten::sum", "Sum"): []}
    for e in p.function_events:
        for (fwd, bwd), events in found.items():
            if e.name == fwd or (bwd in e.name and "Backward" in e.name):
                events.append(e)
    for idx, ((fwd, bwd), events) in enumerate(found.items()):
        assert _names(events) == [fwd, f"{ENGINE}{bwd}Backward{idx}", f"{bwd}Backward{idx}"]
        assert events[0].sequence_nr >= 0
        assert events[1].sequence_nr == events[2].sequence_nr == events[0].sequence_nr
        assert events[0].fwd_thread == 0
        assert events[1].fwd_thread == events[2].fwd_thread == events[0].thread
    accumulate = [e for e in p.function_events if "AccumulateGrad" in e.name]
    assert _names(accumulate) == [ENGINE + "torch::autograd::AccumulateGrad",
                                  "torch::autograd::AccumulateGrad"] * 2
    assert all(e.sequence_nr == -1 for e in accumulate)


def test_ops_without_grad_mode_have_no_sequence_number():
    x = retrograd.ones(3, requires_grad=True)
    with profile() as p:
        with retrograd.no_grad():
            x * 2
        x.detach() * 3
    mul_no_grad, mul = p.function_events
    assert mul_no_grad.sequence_nr == -1
    assert mul.sequence_nr >= 0


def test_backward_nodes_nest_their_ops():
    x = retrograd.randn(3, 3, requires_grad=True)
    w = retrograd.randn(3, 3, requires_grad=True)
    with profile() as p:
        (x * w).exp().sum().backward()
    by_name = {e.name: e for e in p.function_events}
    node = by_name["MulBackward0"]
    assert node.cpu_parent.name == ENGINE + "MulBackward0"
    assert _names(node.cpu_children) == ["aten::mul", "aten::mul"]
    assert node.scope == 1
    assert by_name[ENGINE + "MulBackward0"].cpu_parent is None
    assert _names(by_name["SumBackward0"].cpu_children) == ["aten::expand"]
    # a node's total covers its children
    for e in p.function_events:
        for c in e.cpu_children:
            assert e.time_range.start <= c.time_range.start <= c.time_range.end
            assert c.time_range.end <= e.time_range.end


def test_ops_in_backward_are_numbered_minus_one():
    x = retrograd.randn(4, requires_grad=True)
    with profile() as p:
        (x * x).sum().backward()
    inner = [e for e in p.function_events if e.cpu_parent is not None
             and e.cpu_parent.name == "MulBackward0"]
    assert _names(inner) == ["aten::mul", "aten::mul"]
    assert all(e.sequence_nr == -1 for e in inner)
    # x's two gradients are summed in x's input buffer, within evaluate_function, after the
    # node's own range, in place: the first is memory the engine made (as in torch 2.13)
    evaluate = next(e for e in p.function_events if e.name == ENGINE + "MulBackward0")
    assert _names(evaluate.cpu_children) == ["MulBackward0", "aten::add_"]


def test_profiler_shapes():
    layer1 = retrograd.nn.Linear(20, 30)
    layer2 = retrograd.nn.Linear(30, 40)
    inp = retrograd.randn(128, 20)
    with profile(record_shapes=True) as prof:
        layer2(layer1(inp))
    shapes = [e.input_shapes for e in prof.function_events if e.name == "aten::addmm"]
    # torch records these shapes for the aten::addmm inside aten::linear
    assert shapes == [[[30], [128, 20], [20, 30], [], []], [[40], [128, 30], [30, 40], [], []]]


def test_shapes_only_when_asked():
    with profile() as p:
        retrograd.ones(2, 3) * 2
    assert p.function_events[0].input_shapes == []
    assert "Input Shapes" not in p.table()


def test_group_by_input_shape():
    with profile(record_shapes=True) as p:
        _ONES[2] * 2
        _ONES[3] * 2
        _ONES[3] * 2
    plain = p.key_averages()
    assert [(a.key, a.count, a.input_shapes) for a in plain] == [("aten::mul", 3, "")]
    grouped = p.key_averages(group_by_input_shape=True)
    assert [(a.key, a.count, a.input_shapes) for a in grouped] == [
        ("aten::mul", 1, [[2], []]), ("aten::mul", 2, [[3], []])]
    assert "Input Shapes" in grouped.table()


# --- record_function -----------------------------------------------------------------------------


def test_record_function_order_and_nesting():
    x = retrograd.randn(10, 10)

    def forward(x):
        with record_function("outer"):
            y = x * 2 + 4
            with record_function("inner"):
                y = y - 1
        y = y / 1

    forward(x)  # outside a profile: nothing is recorded, nothing fails
    with profile() as p:
        forward(x)
    assert _names(p.function_events) == ["outer", "aten::mul", "aten::add", "inner",
                                         "aten::sub", "aten::div"]
    outer, mul, add, inner, sub, div = p.function_events
    assert _names(outer.cpu_children) == ["aten::mul", "aten::add", "inner"]
    assert sub.cpu_parent is inner and div.cpu_parent is None
    assert outer.is_user_annotation and not mul.is_user_annotation


def test_record_function_decorator():
    @record_function("my_func")
    def f(x, y):
        return x + y

    with profile() as p:
        assert f(1, 2) == 3
        f(retrograd.ones(1), 1)
    assert "my_func" in str(p)
    events = [e for e in p.function_events if e.name == "my_func"]
    assert len(events) == 2
    assert _names(events[1].cpu_children) == ["aten::add"]


def test_record_function_decorator_recursion_nests():
    @record_function("rec")
    def f(n):
        return _ONES[1] * n if n < 2 else f(n - 1) + 1

    with profile() as p:
        f(3)
    # each call has its own range, nested in its caller's
    r3, r2, r1, mul, add2, add3 = p.function_events
    assert _names([r3, r2, r1, mul, add2, add3]) == ["rec"] * 3 + ["aten::mul", "aten::add",
                                                                  "aten::add"]
    assert (r2.cpu_parent, r1.cpu_parent, mul.cpu_parent) == (r3, r2, r1)
    assert (add2.cpu_parent, add3.cpu_parent) == (r2, r3)


def test_record_function_callbacks_count():
    x = retrograd.randn(10, 10)
    with profile() as p:
        with record_function("foo"):
            x * 2 + 4
    foo = next(e for e in p.function_events if "foo" in e.name)
    assert foo.count == 1
    assert [(a.key, a.count) for a in p.key_averages()] == [
        ("foo", 1), ("aten::mul", 1), ("aten::add", 1)]


def test_record_function_out_of_order_exit():
    rf = record_function("outer")
    rf.__enter__()
    with record_function("inner"):
        rf.__exit__(None, None, None)
    with record_function("inner"):
        rf.__enter__()
    rf.__exit__(None, None, None)
    with profile() as p:
        rf = record_function("outer")
        rf.__enter__()
        with record_function("inner"):
            rf.__exit__(None, None, None)
            _ONES[1] * 2
    assert _names(p.function_events) == ["outer", "inner", "aten::mul"]
    assert p.function_events[2].cpu_parent.name == "inner"


def test_record_function_in_backward_hook():
    x = retrograd.ones(3, requires_grad=True)
    y = x * 2

    def hook(g):
        with record_function("hook"):
            return g * 1

    y.register_hook(hook)
    with profile() as p:
        y.sum().backward()
    hook_event = next(e for e in p.function_events if e.name == "hook")
    assert hook_event.cpu_parent.name == "MulBackward0" or \
        hook_event.cpu_parent.name.startswith(ENGINE)
    assert _names(hook_event.cpu_children) == ["aten::mul"]


def test_multithreaded_backward_threads():
    x = retrograd.ones(3, requires_grad=True)

    def work():
        (x * 2).sum().backward()

    with profile() as p:
        work()
        t = threading.Thread(target=work)
        t.start()
        t.join()
    threads = sorted({e.thread for e in p.function_events})
    assert threads == [1, 2]
    second = [e for e in p.function_events if e.thread == 2]
    assert _names(second)[:2] == ["aten::mul", "aten::sum"]
    node = next(e for e in second if e.name == "MulBackward0")
    assert node.fwd_thread == 2


def test_backward_error_leaves_no_open_range():
    class Boom(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = retrograd.ones(2, requires_grad=True)
    with profile() as p:
        with record_function("step"):
            y = Boom.apply(x).sum()
            with pytest.raises(ValueError, match="boom"):
                y.backward()
        retrograd.ones(1) * 3
    last = p.function_events[-1]
    assert last.name == "aten::mul" and last.cpu_parent is None


# --- memory -----------------------------------------------------------------------------------


def test_profile_memory_counts_output_bytes():
    x = retrograd.ones(10, 10)
    with profile(profile_memory=True) as p:
        with record_function("block"):
            y = x * 2  # 400 bytes, as torch reports for aten::mul
            y.view(100)  # a view allocates nothing
            y.sum()
    block, mul, view, total = p.function_events
    assert (mul.cpu_memory_usage, view.cpu_memory_usage, total.cpu_memory_usage) == (400, 0, 4)
    assert block.cpu_memory_usage == 404 and block.self_cpu_memory_usage == 0
    table = p.key_averages().table()
    assert "CPU Mem" in table and "Self CPU Mem" in table and "400 B" in table


def test_no_memory_columns_without_profile_memory():
    with profile() as p:
        retrograd.ones(2) * 2
    assert "CPU Mem" not in p.table()
    assert p.function_events[0].cpu_memory_usage == 0


# --- stacks -----------------------------------------------------------------------------------


def test_with_stack_records_user_frames_and_backward_inherits():
    x = retrograd.ones(3, requires_grad=True)

    def model(x):
        return (x * 2).sum()

    with profile(with_stack=True) as p:
        model(x).backward()
    mul = p.function_events[0]
    assert mul.name == "aten::mul"
    assert mul.stack[0].endswith(": model") and "test_profiler.py" in mul.stack[0]
    assert not any("retrograd" + os.sep + "_ops" in s for s in mul.stack)
    mul_backward_op = next(e for e in p.function_events
                           if e.cpu_parent is not None and e.cpu_parent.name == "MulBackward0")
    assert mul_backward_op.stack == mul.stack
    table = p.key_averages(group_by_stack_n=1).table()
    assert "Source Location" in table


def test_export_stacks(tmp_path):
    with profile(with_stack=True) as p:
        for _ in range(3):
            retrograd.ones(50, 50) * 2
    path = tmp_path / "stacks.txt"
    p.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    assert all(";" not in line.split(" ")[0] or "test_export_stacks" in line for line in lines)
    with pytest.raises(ValueError, match="metric should be one of"):
        p.function_events.export_stacks(str(path), "bogus")


# --- results: events, averages, tables -------------------------------------------------------


def test_profiler_aggregation_fake():
    events = EventList()
    ids = iter(range(1, 100))
    threads = [[1, [(0, 1), (1, 2)]], [0, [(0, 2), (1, 2), (1, 3)]]]
    for thread, ranges in threads:
        for start, end in ranges:
            events.append(FunctionEvent(id=next(ids), node_id=0, name="", thread=thread,
                                        start_us=start, end_us=end))
    events._populate_cpu_children()
    # [1, 3] pushes [0, 2] out first, then [1, 2] is a child of [1, 3]
    assert [[c.id for c in e.cpu_children] for e in events] == [[], [], [], [], [4]]


def test_profiler_function_event_avg():
    avg = FunctionEventAvg()
    avg.add(FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10, end_us=15))
    avg.add(FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20, end_us=30))
    avg.add(avg)
    assert avg.key == "foo"
    assert (avg.count, avg.cpu_time_total, avg.self_cpu_time_total) == (4, 30, 30)
    assert avg.device_time_total == 0
    assert avg.cpu_time == 7.5
    with pytest.raises(AssertionError, match="Expected keys to match"):
        avg.add(FunctionEvent(id=2, name="bar", thread=0, start_us=0, end_us=1))


def test_profiler_aggregation_table():
    x = retrograd.randn(1024)
    with profile() as prof:
        retrograd.einsum("i->", x)
    assert prof.table() == str(prof)
    assert str(prof).splitlines()[1].split() == [
        "Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total", "CPU",
        "time", "avg", "#", "of", "Calls"]


def test_total_average_and_self_cpu_time_total():
    with profile() as p:
        with record_function("outer"):
            _ONES[4] * 2
    total = p.total_average()
    assert total.key == "Total" and total.count == 2
    assert total.self_cpu_time_total == pytest.approx(p.self_cpu_time_total)
    outer = p.function_events[0]
    assert outer.cpu_time_total == pytest.approx(total.self_cpu_time_total)


def test_unfinished_profile_repr():
    p = profile()
    with p:
        assert str(p) == "<unfinished torch.autograd.profile>"
    assert str(p) != "<unfinished torch.autograd.profile>"


def test_format_helpers():
    assert _format_time(0.5) == "0.500us"
    assert _format_time(1500) == "1.500ms"
    assert _format_time(2.5e6) == "2.500s"
    assert _format_memory(10) == "10 B"
    assert _format_memory(-2048) == "-2.00 KB"
    assert _format_memory(3 * 1024 ** 2) == "3.00 MB"
    assert _format_memory(5 * 1024 ** 3) == "5.00 GB"


def test_emit_itt_and_nvtx_accept_flags():
    from retrograd.autograd import profiler_util

    assert (profiler_util.emit_itt, profiler_util.emit_nvtx) == (emit_itt, emit_nvtx)
    a = retrograd.tensor([1.0, 2.0, 3.0])
    for ctx in (emit_itt, emit_nvtx):
        with ctx():
            a.add(1.0)
        with ctx(enabled=False, record_shapes=True) as c:
            assert c is None
        outer = ctx()
        with outer, pytest.raises(RuntimeError, match="annotation context manager is not "
                                                      "reentrant"):
            outer.__enter__()


def test_use_cuda_and_use_device_warn_and_profile_the_cpu():
    with pytest.warns(FutureWarning, match="use_cuda"), \
            pytest.warns(UserWarning, match="CUDA is not available"):
        p = profile(use_cuda=True)
    assert p.use_device is None
    with p:
        _ONES[2] * 2
    assert _names(p.function_events) == ["aten::mul"]
    with pytest.warns(UserWarning, match="not a valid device option"):
        profile(use_device="tpu")


# --- Chrome trace ---------------------------------------------------------------------------------


def test_export_chrome_trace(tmp_path):
    x = retrograd.randn(3, 3, requires_grad=True)
    with profile(record_shapes=True) as p:
        with record_function("fwd"):
            y = (x * 2).sum()
        y.backward()
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    assert doc["schemaVersion"] == 1 and doc["displayTimeUnit"] == "ms"
    complete = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in complete] == _names(p.function_events)
    by_name = {}
    for e in complete:
        by_name.setdefault(e["name"], e)
    assert by_name["fwd"]["cat"] == "user_annotation"
    assert by_name["aten::mul"]["cat"] == "cpu_op"
    assert by_name["aten::mul"]["args"]["Input Dims"] == [[3, 3], []]
    assert by_name["aten::mul"]["args"]["Sequence number"] >= 0
    fwd, mul = by_name["fwd"], by_name["aten::mul"]
    assert fwd["ts"] <= mul["ts"] and mul["ts"] + mul["dur"] <= fwd["ts"] + fwd["dur"]
    names = [e for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
    assert {e["tid"] for e in names} == {e["tid"] for e in complete}


def test_event_list_chrome_trace_matches_torch(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.autograd import profiler_util as tu

    def events(mod):
        out = mod.EventList()
        for i, (name, start, end) in enumerate([("a", 0, 10), ("b", 2, 5)]):
            out.append(mod.FunctionEvent(id=i, name=name, thread=1, start_us=start,
                                         end_us=end, trace_name=name))
        return out

    assert torch is not None
    events(tu).export_chrome_trace(str(tmp_path / "t.json"))
    events(retrograd.autograd.profiler_util).export_chrome_trace(str(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text()) == \
        json.loads((tmp_path / "t.json").read_text())


# --- parity with torch's profiler ---------------------------------------------------------------


def _synthetic(mod, with_shapes: bool):
    """The same hand-made events in torch's and retrograd's classes."""
    spec = [("outer_block", 0, 100, None), ("aten::mul", 10, 30, [[4, 4], []]),
            ("aten::add", 40, 45, [[4, 4], [4, 4], []]), ("aten::mul", 50, 2600, [[8], []]),
            ("a_long_name_" + "x" * 60, 2700, 2800, None)]
    out = mod.EventList(profile_memory=True)
    for i, (name, start, end, shapes) in enumerate(spec):
        out.append(mod.FunctionEvent(id=i, name=name, thread=1, start_us=start, end_us=end,
                                     input_shapes=shapes if with_shapes else [], stack=[],
                                     cpu_memory_usage=64 * i))
    out._build_tree()
    return out


@pytest.mark.parametrize("with_shapes", [False, True])
@pytest.mark.parametrize("kwargs", [
    {}, {"sort_by": "self_cpu_time_total", "row_limit": 2}, {"sort_by": "cpu_time_total"},
    {"header": "TEST", "top_level_events_only": True}, {"time_unit": "ms"},
    {"sort_by": "count", "max_name_column_width": 20}])
def test_table_layout_matches_torch(with_shapes, kwargs):
    torch = pytest.importorskip("torch")
    theirs = _synthetic(torch.autograd.profiler_util, with_shapes)
    ours = _synthetic(retrograd.autograd.profiler_util, with_shapes)
    assert ours.table(**kwargs) == theirs.table(**kwargs)
    assert ours.key_averages().table(**kwargs) == theirs.key_averages().table(**kwargs)
    assert ours.key_averages(group_by_input_shapes=True).table(**kwargs) == \
        theirs.key_averages(group_by_input_shapes=True).table(**kwargs)
    assert repr(ours.total_average()) == repr(theirs.total_average())


def test_format_helpers_match_torch():
    pytest.importorskip("torch")
    from torch.autograd import profiler_util as tu

    for t in (0, 0.25, 999.9994, 1000, 123456.7, 1e6, 3.2e7):
        assert _format_time(t) == tu._format_time(t)
    for n in (0, 1, 1023, 1024, -5000, 2 ** 20, 2 ** 30 * 3):
        assert _format_memory(n) == tu._format_memory(n)


def _program(lib):
    lib.manual_seed(0)
    x = lib.randn(3, 4, requires_grad=True)
    w = lib.randn(3, 4, requires_grad=True)
    prof = __import__(lib.__name__ + ".autograd.profiler", fromlist=["profile"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with prof.profile(record_shapes=True, profile_memory=True) as p:
            with prof.record_function("model"):
                y = ((x * w).exp() - 1).sum()
            y.backward()
    return p


def test_event_names_nesting_and_counts_match_torch():
    torch = pytest.importorskip("torch")
    theirs, ours = _program(torch), _program(retrograd)

    def tree(p):
        # top-level ranges, and for each the names of its direct children
        return [(e.name, _names(e.cpu_children)) for e in p.function_events
                if e.cpu_parent is None and e.name not in ("aten::ones_like", "[memory]")]

    def seq(p, e):
        # sequence numbers relative to the program's first op (the counters differ)
        first = next(e for e in p.function_events if e.name.startswith("aten::"))
        return e.sequence_nr - first.sequence_nr if e.sequence_nr >= 0 else -1

    def nodes(p):
        return [(e.name, e.input_shapes, seq(p, e), _names(e.cpu_children))
                for e in p.function_events if e.name.endswith("Backward0")]

    def forward_ops(p):
        model = next(e for e in p.function_events if e.name == "model")
        return [(e.name, e.input_shapes, seq(p, e), e.cpu_memory_usage)
                for e in model.cpu_children]

    assert tree(ours) == tree(theirs)
    assert nodes(ours) == nodes(theirs)
    assert forward_ops(ours) == forward_ops(theirs)
    # retrograd records a subset of torch's events (torch also shows its internal
    # empty/as_strided/fill_/detach calls); where both record a name, the counts agree
    ours_count = Counter(_names(ours.function_events))
    theirs_count = Counter(_names(theirs.function_events))
    assert set(ours_count) <= set(theirs_count)
    assert ours_count == {k: theirs_count[k] for k in ours_count}
    assert [(a.key, a.count) for a in ours.key_averages()] == \
        [(a.key, a.count) for a in theirs.key_averages() if a.key in ours_count]


# --- retrograd.profiler (torch.profiler) --------------------------------------------------------


def test_schedule_matches_torch():
    torch = pytest.importorskip("torch")
    for kwargs in ({"wait": 1, "warmup": 1, "active": 2},
                   {"wait": 2, "warmup": 1, "active": 3, "repeat": 2, "skip_first": 3},
                   {"wait": 5, "warmup": 1, "active": 1, "skip_first": 2, "skip_first_wait": 1}):
        ours = retrograd.profiler.schedule(**kwargs)
        theirs = torch.profiler.schedule(**kwargs)
        assert [ours(s).name for s in range(25)] == [theirs(s).name for s in range(25)]
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        retrograd.profiler.schedule(wait=0, warmup=0, active=0)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        retrograd.profiler.schedule(wait=1, warmup=0, active=1)


def test_torch_profiler_api_with_schedule(tmp_path):
    from retrograd.profiler import ProfilerActivity, schedule
    from retrograd.profiler import profile as tprofile

    ready = []

    def on_ready(prof):
        ready.append([e.name for e in prof.events()])

    x = retrograd.ones(2)
    with tprofile(activities=[ProfilerActivity.CPU],
                  schedule=schedule(wait=1, warmup=1, active=2),
                  on_trace_ready=on_ready) as p:
        for step in range(4):
            with retrograd.profiler.record_function(f"work{step}"):
                x * step
            p.step()
    # steps 2 and 3 are recorded, then handed over; step 4 is the next cycle's wait
    assert ready == [["ProfilerStep*", "work2", "aten::mul",
                      "ProfilerStep*", "work3", "aten::mul"]]
    assert [(a.key, a.count) for a in p.key_averages()][:1] == [("ProfilerStep*", 2)]


def test_tensorboard_trace_handler_writes_chrome_trace(tmp_path):
    from retrograd.profiler import profile as tprofile
    from retrograd.profiler import schedule, tensorboard_trace_handler

    logdir = tmp_path / "log"
    with tprofile(schedule=schedule(wait=0, warmup=1, active=1),
                  on_trace_ready=tensorboard_trace_handler(str(logdir), "worker0")) as p:
        for _ in range(2):
            _ONES[3] * 2
            p.step()
    files = os.listdir(logdir)
    assert len(files) == 1 and files[0].startswith("worker0.")
    assert files[0].endswith(".pt.trace.json")
    doc = json.loads((logdir / files[0]).read_text())
    names = [e["name"] for e in doc["traceEvents"] if e["ph"] == "X"]
    assert names == ["ProfilerStep#1", "aten::mul"]


def test_torch_profiler_without_schedule_records_everything():
    from retrograd.profiler import profile as tprofile

    with tprofile() as p:
        _ONES[2] + 1
        p.step()
        _ONES[2] - 1
    assert _names(p.events()) == ["aten::add", "aten::sub"]
    assert retrograd.profiler.supported_activities() == {retrograd.profiler.ProfilerActivity.CPU}
    assert not retrograd.profiler.itt.is_available()


def test_gzip_export(tmp_path):
    import gzip

    from retrograd.profiler import profile as tprofile

    with tprofile() as p:
        _ONES[2] * 2
    path = tmp_path / "t.json.gz"
    p.export_chrome_trace(str(path))
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    assert [e["name"] for e in doc["traceEvents"] if e["ph"] == "X"] == ["aten::mul"]


def _roots_and_grad(lib):
    prof = __import__(lib.__name__ + ".autograd.profiler", fromlist=["profile"])
    x = lib.ones(3, requires_grad=True)
    with prof.profile() as p:
        a, b = (x * 2).sum(), (x * 3).sum()
        lib.autograd.backward([a, b])  # several roots: a GraphRoot node runs first
        lib.autograd.grad((x * x).sum(), [x])  # x's gradient is captured, its node not run
    # torch's aten::mul with a Python scalar calls aten::to inside; nodes' children compare.
    # Where torch sums the two gradients of one input in place (aten::add_), retrograd adds
    # out of place when the first gradient is still referenced (here by the node's outputs)
    return [(e.name, [n.replace("add_", "add") for n in _names(e.cpu_children)]
             if e.name.startswith(ENGINE) else None)
            for e in p.function_events
            if e.cpu_parent is None and e.name != "aten::ones_like"]


def test_graph_root_and_captured_nodes_match_torch():
    torch = pytest.importorskip("torch")
    assert _roots_and_grad(retrograd) == _roots_and_grad(torch)


def test_in_place_gradient_sum_is_recorded_as_add_():
    x = retrograd.ones(3, requires_grad=True)
    with profile(record_shapes=True) as p:
        y = x * 2
        (y.exp() + y.sin()).sum().backward()  # y's buffer sums two fresh gradients
    adds = [e for e in p.function_events if e.name == "aten::add_"]
    assert len(adds) == 1
    assert adds[0].cpu_parent.name.startswith(ENGINE)
    assert adds[0].input_shapes == [[3], [3], []]
    assert x.grad.tolist() == pytest.approx(
        ((2 * x.detach()).exp() * 2 + (2 * x.detach()).cos() * 2).tolist())


def _flops_program(lib):
    prof = __import__(lib.__name__ + ".autograd.profiler", fromlist=["profile"])
    a, b, c = lib.ones(8, 4), lib.ones(4, 5), lib.ones(5)
    A, B, C = lib.ones(3, 8, 4), lib.ones(3, 4, 5), lib.ones(3, 8, 5)
    with prof.profile(with_flops=True) as p:
        a.mm(b)
        lib.addmm(c, a, b)
        A.bmm(B)
        lib.baddbmm(C, A, B)
        a * a
        a + a
        a - a
    return p


def test_flops_match_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _flops_program(retrograd), _flops_program(torch)
    names = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::mul", "aten::add",
             "aten::sub"}
    assert [(e.name, e.flops) for e in ours.function_events] == \
        [(e.name, e.flops) for e in theirs.function_events if e.name in names]
    table = ours.key_averages().table()
    assert table.splitlines()[1].split()[-2:] == ["Total", "FLOPs"]
    assert "960.000" in table  # bmm, in FLOPs (the smallest count, 32, sets the unit)


def test_forward_sequence_numbers_are_the_nodes():
    x = retrograd.ones(3, requires_grad=True)
    with profile() as p:
        y = x * 2
        z = y.exp()
        w = _ONES[3] + 1  # no node: the next number, not taken
        v = z.sin()
    assert [e.sequence_nr for e in p.function_events] == [
        y.grad_fn._sequence_nr(), z.grad_fn._sequence_nr(), v.grad_fn._sequence_nr(),
        v.grad_fn._sequence_nr()]
    assert w.grad_fn is None
