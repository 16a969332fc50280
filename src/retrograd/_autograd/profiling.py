"""The profiler's recorder: timed, nested ranges per thread (see retrograd.autograd.profiler).

NOTE [Profiling]
While a profiler is active, `active` holds its Recorder. Three things open ranges in it:
- a dispatch mode (retrograd.autograd.profiler) around every op, named "aten::<op>";
- record_function, around user code;
- the engine, around every node it runs: "autograd::engine::evaluate_function: <name>" with
  "<name>" inside it. The engine reads `active` once per backward call and pays one test of a
  local per node when no profiler runs; a node's ranges close when the next node starts (or
  the backward ends), so gradient accumulation into the next nodes' buffers counts within them.
Each range records its parent (the innermost range open on its thread when it started), so the
nesting is exact even for ranges with equal timestamps.
"""

from __future__ import annotations

import threading
from time import perf_counter_ns

from retrograd._autograd.node import MAX_SEQUENCE_NR

active = None  # the Recorder of the running profiler, or None

FORWARD_SCOPE, BACKWARD_SCOPE, USER_SCOPE = 0, 1, 7  # at::RecordScope values torch reports


class Range:
    """One timed range: what a FunctionEvent is made from."""

    __slots__ = ("name", "start_ns", "end_ns", "thread", "ident", "parent", "sequence_nr",
                 "fwd_thread", "input_shapes", "stack", "memory", "scope", "engine")

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
        self.scope = FORWARD_SCOPE
        self.engine = False


class Recorder:
    """Ranges of one profiling run, in the order they started."""

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
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

    def begin_node(self, node, grads: list, previous: tuple | None, runs: bool) -> tuple:
        """Close the previous node's ranges and open this node's: "evaluate_function", and
        inside it, if the node runs (not only has its gradient captured), its own name."""
        if previous is not None:
            self.end_node(previous)
        name = node.name()
        seq = node._seq
        if seq == MAX_SEQUENCE_NR:
            seq, fwd = -1, 0
        else:
            fwd = self.fwd_threads.get(seq)
            if fwd is None:
                fwd = self.thread(threading.get_ident())
        outer = self.begin("autograd::engine::evaluate_function: " + name)
        outer.sequence_nr = seq
        outer.fwd_thread = fwd
        outer.engine = True
        if self.record_shapes:
            outer.input_shapes = []
        if not runs:
            return outer, None
        inner = self.begin(name)
        inner.sequence_nr = seq
        inner.fwd_thread = fwd
        inner.engine = True
        inner.scope = BACKWARD_SCOPE
        if self.record_shapes:
            inner.input_shapes = [[] if g is None else list(g._data.shape) for g in grads]
        return outer, inner

    def end_node(self, ranges: tuple) -> None:
        outer, inner = ranges
        if inner is not None:
            self.end(inner)
        self.end(outer)
