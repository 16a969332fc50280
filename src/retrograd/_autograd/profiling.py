"""The profiler's recorder: timed, nested ranges per thread (see retrograd.autograd.profiler).

NOTE [Profiling]
While a profiler is active, `active` holds its Recorder. Three things open ranges in it:
- a dispatch mode (retrograd.autograd.profiler) around every op, named "aten::<op>";
- record_function, around user code;
- the engine, around every node it evaluates: "autograd::engine::evaluate_function: <name>"
  with "<name>" inside it around the node's function. The engine reads `active` once per
  backward call: under a profiler it pops nodes with an EnginePop, which opens a node's ranges
  as it hands the node over; after the node's function (and hooks) the engine tests a local
  once per node to end "<name>"; "evaluate_function" ends when the next node is popped, so the
  gradients passed on to the next nodes' buffers (summing them: aten::add_) count within it.
  With no profiler, the pop is heapq's and the one test of a local is the only cost.
Each range records its parent (the innermost range open on its thread when it started), so the
nesting is exact even for ranges with equal timestamps.
"""

from __future__ import annotations

import threading
from heapq import heappop
from time import perf_counter_ns

import numpy as np

from retrograd._autograd.node import MAX_SEQUENCE_NR

active = None  # the Recorder of the running profiler, or None

FORWARD_SCOPE, BACKWARD_SCOPE, USER_SCOPE = 0, 1, 7  # at::RecordScope values torch reports


class Range:
    """One timed range: what a FunctionEvent is made from."""

    __slots__ = ("name", "start_ns", "end_ns", "thread", "ident", "parent", "sequence_nr",
                 "fwd_thread", "input_shapes", "stack", "memory", "flops", "scope", "engine")

    def __init__(self, name: str, thread: int, ident: int, parent: Range | None) -> None:
        self.name = name
        self.thread = thread
        self.ident = ident
        self.parent = parent
        self.start_ns = self.end_ns = 0
        self.sequence_nr = -1
        self.fwd_thread = 0
        self.input_shapes = None
        self.stack = None
        self.memory = 0
        self.flops = 0
        self.scope = FORWARD_SCOPE
        self.engine = False


class Recorder:
    """Ranges of one profiling run, in the order they started."""

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.ranges: list = []
        self._open: dict = {}  # thread ident -> stack of open ranges
        self._threads: dict = {}  # thread ident -> small thread number (1, 2, ...)
        self.fwd_threads: dict = {}  # sequence nr of a node made while profiling -> its thread
        self._lock = threading.Lock()
        self.start_ns = perf_counter_ns()
        self.end_ns = None

    def thread(self, ident: int) -> int:
        tid = self._threads.get(ident)
        if tid is None:
            with self._lock:
                tid = self._threads.setdefault(ident, len(self._threads) + 1)
        return tid

    def begin(self, name: str) -> Range:
        ident = threading.get_ident()
        stack = self._open.get(ident)
        if stack is None:
            stack = self._open.setdefault(ident, [])
        r = Range(name, self.thread(ident), ident, stack[-1] if stack else None)
        stack.append(r)
        self.ranges.append(r)
        r.start_ns = perf_counter_ns()
        return r

    def end(self, r: Range) -> None:
        now = perf_counter_ns()
        if r.end_ns:
            return
        r.end_ns = now
        stack = self._open.get(r.ident)
        if not stack:
            return
        if stack[-1] is r:
            stack.pop()
            return
        if r not in stack:
            return
        # ranges left open above r: the engine's (a backward that raised) end with r; a
        # record_function's stays open until it exits (ranges may end out of order)
        i = stack.index(r)
        for above in stack[i + 1:]:
            if above.engine:
                above.end_ns = now
        stack[i:] = [a for a in stack[i + 1:] if not a.engine]

    def stop(self) -> None:
        """End the run: ranges still open end now."""
        now = self.end_ns = perf_counter_ns()
        for stack in self._open.values():
            for r in stack:
                if not r.end_ns:
                    r.end_ns = now
            stack.clear()

    # --- the engine's side (NOTE [Profiling]) ---------------------------------------------------

    def engine_pop(self, exec_info: dict | None) -> EnginePop:
        return EnginePop(self, exec_info)

    def accumulate_in_place(self, a, b) -> None:
        """A gradient summed into an input buffer in place: torch's aten::add_."""
        r = self.begin("aten::add_")
        if self.record_shapes:
            r.input_shapes = [list(a.shape), list(b.shape), []]
        try:
            np.add(a, b, out=a)
        finally:
            self.end(r)


class EnginePop:
    """heappop for one backward call under the profiler: a popped node is about to be
    evaluated, so the previous node's ranges end and this node's begin:
    "autograd::engine::evaluate_function: <name>", and inside it, if the node runs (it may only
    have its gradient captured), "<name>" until node_ran()."""

    __slots__ = ("recorder", "exec_info", "outer", "inner")

    def __init__(self, recorder: Recorder, exec_info: dict | None) -> None:
        self.recorder = recorder
        self.exec_info = exec_info
        self.outer = self.inner = None

    def __call__(self, heap: list) -> tuple:
        entry = heappop(heap)
        self.finish()
        node, grads = entry[2], entry[3]
        rec = self.recorder
        name = node.name()
        seq = node._seq
        if seq == MAX_SEQUENCE_NR:
            seq, fwd = -1, 0
        else:
            fwd = rec.fwd_threads.get(seq)
            if fwd is None:
                fwd = rec.thread(threading.get_ident())
        outer = self.outer = rec.begin("autograd::engine::evaluate_function: " + name)
        outer.sequence_nr, outer.fwd_thread, outer.engine = seq, fwd, True
        if rec.record_shapes:
            outer.input_shapes = []
        if self.exec_info is not None and not self.exec_info.get(node, False):
            return entry
        inner = self.inner = rec.begin(name)
        inner.sequence_nr, inner.fwd_thread, inner.engine = seq, fwd, True
        inner.scope = BACKWARD_SCOPE
        if rec.record_shapes:
            inner.input_shapes = [[] if g is None else list(g._data.shape) for g in grads]
        return entry

    def node_ran(self) -> None:
        if self.inner is not None:
            self.recorder.end(self.inner)
            self.inner = None

    def finish(self) -> None:
        self.node_ran()
        if self.outer is not None:
            self.recorder.end(self.outer)
            self.outer = None
