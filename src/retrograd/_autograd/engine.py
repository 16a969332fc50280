"""The backward engine: runs the graph from some outputs' nodes back to leaves.

NOTE [Engine order]
A node runs once every node that feeds it a gradient has run (dependency counts computed by a walk
from the roots). Among ready nodes the one created last runs first (highest sequence number),
as in PyTorch; AccumulateGrad nodes carry the largest possible number, so a leaf's `.grad` is
written as soon as its gradient is complete. The walk is iterative: deep graphs do not hit
Python's recursion limit.

NOTE [Gradient ownership]
Whether a gradient's memory may be written in place (summing into an input buffer) or kept as a
leaf's `.grad` without a copy (stealing, NOTE [Gradient layout contract]) is decided by who made
it, never by counting references. The engine owns: a sum it computed for a slot fed by several
edges, and an op node's formula result that is new memory (an array it made, or a view covering
all of one) or all the memory of a gradient the node was given and the engine owned (a view's
backward passes on a view of it), unless another result of the node shares that memory (add
hands its gradient to both inputs). Everything else may be seen elsewhere and is never written:
a gradient passed to backward() or captured by autograd.grad, what a custom Function returned,
results of a node with hooks (they may have kept what came in or what goes out), anything built
while create_graph records a graph or while a dispatch mode sees every op's result (a tracer
keeps them, and records the sums as adds; the profiler's mode, which keeps none, does not count).
The mark is one bit per slot, in the heap entry with the buffer (a buffer waiting for several
gradients keeps its mask as a last element), and it is worked out only where it is read: for
the first gradient of a buffer that more will be added to, and for the nodes that may keep or
pass on their gradient's memory (`Node._reads_ownership`: AccumulateGrad, view ops, add,
clone). When tensor or node pre-hooks are handed a leaf's gradient, what they leave is the
engine's only if no hook kept it (it is gone once the engine lets go of it, as PyTorch steals a
gradient whose use count says nobody else holds it).

NOTE [exec_info]
With `inputs=` (autograd.grad, or backward(inputs=...)) only the part of the graph that leads to
those inputs runs. `exec_info` maps each node to whether it must execute; gradients arriving at
an input's node are captured (autograd.grad) instead of running it. Without `inputs=`,
`exec_info` is None and every reachable node runs.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from heapq import heappop, heappush

import numpy as np

from retrograd import _errors as E
from retrograd._autograd import op_seam, profiling
from retrograd._autograd.accumulate_grad import AccumulateGrad, dispatch_modes
from retrograd._autograd.anomaly import anomaly
from retrograd._autograd.hooks import check_tensor_result, check_tuple_result
from retrograd._autograd.node import FROM_TASK, GraphRoot, Node
from retrograd._autograd.state import state
from retrograd._tensor import Tensor, _wrap

_task_ids = itertools.count()


class GraphTask:
    """State of one backward call: what runs, what is captured, callbacks to run at the end."""

    __slots__ = ("id", "exec_info", "captures", "captured", "keep_graph", "create_graph",
                 "final_callbacks", "nodes", "current_node", "__weakref__")

    def __init__(self, keep_graph: bool, create_graph: bool) -> None:
        self.id = next(_task_ids)
        self.exec_info = None  # node -> bool (must run); None: everything runs
        self.captures = None  # node -> [(input_nr, output_index)]
        self.captured = None
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.final_callbacks = []
        self.nodes = None  # node -> dependency count (the reachable graph)
        self.current_node = None

    def should_compute(self, node: Node) -> bool:
        """Whether a gradient for an edge into `node` is used by this backward."""
        if self.exec_info.get(node, False):
            return True
        return self.captures is not None and node in self.captures

    def will_execute(self, node: Node) -> bool:
        """Whether `node` runs in this backward or, for autograd.grad, receives a gradient
        there (retrograd counts captured inputs too, so multi-grad hooks work under grad())."""
        if self.exec_info is None:
            return node in self.nodes
        return self.should_compute(node)


def queue_callback(callback) -> None:
    task = state.graph_task
    if task is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    task.final_callbacks.append(callback)


# NOTE [Deep reentrant backward]
# A backward called from inside a node's backward (reentrant) runs on the caller's stack. Past
# this many nested calls on one thread, the next one runs on a fresh thread (with the caller's
# autograd state) while the caller waits, as PyTorch's engine does past its own depth limit, so
# thousands of nested backward calls never exhaust Python's recursion limit.
_MAX_NESTED_BACKWARD_PER_THREAD = 24


def run_backward(roots: list, grad_outputs: list, keep_graph: bool, create_graph: bool,
                 inputs: list | None = None, accumulate: bool = True,
                 blocked: set | None = None) -> list | None:
    """Run backward from `roots` (edges (node, input_nr)) seeded with `grad_outputs`.

    With `inputs` (a list of edges) and accumulate=False, returns the gradients arriving at those
    edges (autograd.grad); with accumulate=True only the nodes leading to them run. Nodes in
    `blocked` never run and receive nothing (a pipeline stage's weight pass uses this to keep
    gradients from flowing back into the input path it already differentiated).
    """
    args = (roots, grad_outputs, keep_graph, create_graph, inputs, accumulate, blocked)
    if state.backward_depth >= _MAX_NESTED_BACKWARD_PER_THREAD:
        return _on_fresh_thread(_run_backward, args)
    state.backward_depth += 1
    try:
        return _run_backward(*args)
    finally:
        state.backward_depth -= 1


def _on_fresh_thread(fn, args: tuple):
    """fn(*args) on a new thread that starts from this thread's autograd state; its result or
    its exception comes back here (NOTE [Deep reentrant backward])."""
    inherited = dict(vars(state))
    outcome: list = [None, None]

    def run() -> None:
        vars(state).update(inherited)
        state.backward_depth = 1
        try:
            outcome[0] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed back to the waiting caller
            outcome[1] = e

    worker = threading.Thread(target=run, name="retrograd-reentrant-backward")
    worker.start()
    worker.join()
    if outcome[1] is not None:
        raise outcome[1]
    return outcome[0]


def _run_backward(roots: list, grad_outputs: list, keep_graph: bool, create_graph: bool,
                  inputs: list | None, accumulate: bool, blocked: set | None) -> list | None:
    task = GraphTask(keep_graph, create_graph)
    # One root: start at its node directly with a pre-filled buffer (no GraphRoot node needed).
    buffers: dict = {}
    if len(roots) == 1:
        node, nr = roots[0]
        buf = [None] * max(len(node._output_meta), nr + 1)
        g = grad_outputs[0]
        if g is not None and nr < len(node._output_meta):
            meta = node._output_meta[nr]
            if g._data.dtype != meta[1] or g._data.shape != meta[0]:
                g = _validate(node, nr, g, meta)  # as a GraphRoot's output would be
        buf[nr] = g
        buffers[node] = buf
        start = node
    else:
        from retrograd._autograd.node import GraphRoot

        start = GraphRoot(tuple(roots), grad_outputs)
        buffers[start] = []
    deps = _dependencies(start, blocked)
    task.nodes = deps
    if inputs is not None:
        _init_exec_info(task, start, inputs, accumulate)
        if blocked:
            for node in blocked:
                if node in task.exec_info:
                    task.exec_info[node] = False

    prev_task, prev_grad = state.graph_task, state.grad_enabled
    # saved-tensor hooks entered or exited by a hook during backward do not outlive it (as in
    # PyTorch, which restores its thread-local state after each node)
    prev_saved_hooks = state.saved_hooks
    prev_tf = (state.torch_function_subclass_off, state.torch_function_off)
    prev_outer = state.torch_function_outer
    state.graph_task = task
    state.grad_enabled = create_graph
    # NOTE [Torch function]: formulas are no calls of the user's
    state.torch_function_outer = prev_tf
    state.torch_function_subclass_off = state.torch_function_off = True
    try:
        _execute(task, start, buffers, deps)
        for cb in task.final_callbacks:
            cb()
    finally:
        state.graph_task = prev_task
        state.grad_enabled = prev_grad
        state.saved_hooks = prev_saved_hooks
        state.torch_function_subclass_off, state.torch_function_off = prev_tf
        state.torch_function_outer = prev_outer
    return task.captured


def _dependencies(start: Node, blocked: set | None = None) -> dict:
    """For each reachable node, how many edges feed it (blocked nodes feed nothing)."""
    deps = {start: 0}
    stack = [start]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if blocked and node in blocked:
            continue
        for nf, _ in node.next_functions:
            if nf is not None:
                n = deps.get(nf)
                if n is None:
                    deps[nf] = 1
                    push(nf)
                else:
                    deps[nf] = n + 1
    return deps


def _init_exec_info(task: GraphTask, start: Node, inputs: list, accumulate: bool) -> None:
    captures: dict = {}
    targets = set()
    for i, (node, nr) in enumerate(inputs):
        if node is None:
            continue
        targets.add(node)
        if not accumulate:
            captures.setdefault(node, []).append((nr, i))
    # post-order walk: a node must run if some target is reachable from it through its edges
    reach: dict = {}
    exec_info: dict = {}
    stack = [(start, iter(start.next_functions))]
    seen = {start}
    while stack:
        node, it = stack[-1]
        for nf, _ in it:
            if nf is not None and nf not in seen:
                seen.add(nf)
                stack.append((nf, iter(nf.next_functions)))
                break
        else:
            stack.pop()
            child_reach = any(nf is not None and reach.get(nf, False)
                              for nf, _ in node.next_functions)
            is_target = node in targets
            reach[node] = child_reach or is_target
            exec_info[node] = child_reach or (is_target and accumulate)
    if start.__class__ is GraphRoot:  # a single root's own node runs only if it leads on
        exec_info[start] = True
    task.exec_info = exec_info
    if not accumulate:
        task.captures = captures
        task.captured = [None] * len(inputs)


def _execute(task: GraphTask, start: Node, buffers: dict, deps: dict) -> None:
    """Run ready nodes, newest first, until none is left (NOTE [Engine order]).

    Heap entries are (-sequence_nr, n, node, input buffer, owned), n counting pushes: nodes
    with equal sequence numbers (AccumulateGrad) run in the order they became ready, the same
    on every run; `owned` has bit k set when the engine owns slot k's gradient (NOTE [Gradient
    ownership]). A node fed by a single edge gets its buffer straight in its heap entry;
    buffers of nodes that wait for several gradients live in `buffers` until the last one
    arrives, with their ownership mask as a last element. Hooks: NOTE [Hook order] in
    retrograd._autograd.hooks."""
    exec_info = task.exec_info
    captures = task.captures
    release = not task.keep_graph
    create_graph = task.create_graph
    needed = None if exec_info is None else FROM_TASK
    heap = [(0, 0, start, buffers.pop(start), 0)]
    tick = itertools.count(1).__next__
    get_buffer = buffers.get
    # NOTE [Profiling]: a profiler's pop opens each node's ranges; one test per node when off
    prof = profiling.active
    pop = heappop if prof is None else prof.engine_pop(exec_info)
    modes = dispatch_modes()  # (the live list: a mode entered by a hook shows in it)
    while heap:
        _, _, node, grads, owned = pop(heap)
        has_hooks = node._hooks is not None or node._lazy_tensor_hooks
        if exec_info is not None:
            if captures is not None and node in captures:
                # a node that also runs captures its gradients before any hook (its tensor
                # hooks run once, below); one that does not run captures them after its
                # tensor hooks, as PyTorch does
                runs = exec_info.get(node, False)
                if has_hooks and not runs:
                    grads = _tensor_pre_hooks(node, grads)
                for nr, idx in captures[node]:
                    task.captured[idx] = grads[nr]
                if not runs:
                    continue
                owned = 0  # handed to the caller of autograd.grad
            elif not exec_info.get(node, False):
                continue
        task.current_node = node
        if has_hooks:
            if node._lazy_tensor_hooks and node._hooks is None and not anomaly.enabled \
                    and not node.tensor_pre_hooks():
                # a leaf's AccumulateGrad with no hooks: nothing flows on from it (it takes
                # its leaf's lock itself)
                node.apply(grads, owned)
                grads = None
                continue
            if node.__class__ is AccumulateGrad:
                grads, owned = _pre_hooks_on_leaf(node, grads, owned)
            else:
                grads = _pre_hooks(node, grads)
            had_post = node._hooks is not None and bool(node._hooks.post)
        if anomaly.enabled:
            from retrograd._autograd.anomaly_report import call_with_anomaly

            outputs = call_with_anomaly(node, grads)
            if release:
                node.release_variables()
        elif owned and node.__class__ is AccumulateGrad:
            outputs = node.apply(grads, owned)  # (it saves nothing)
        else:
            outputs = node._run(grads, release, needed, create_graph)
        hooks = node._hooks
        if hooks is not None and hooks.post:
            if not (has_hooks and had_post):
                # post hooks registered while the node ran (from an unpack hook, say) get no
                # gradients: the node was handed them, as in PyTorch
                grads = []
            outputs = _post_hooks(node, outputs, grads)
        if prof is not None:
            pop.node_ran()
        nexts = node.next_functions
        if len(outputs) != len(nexts):
            raise RuntimeError(E.WRONG_GRAD_COUNT.format(node.name(), len(nexts), len(outputs)))
        trusted = None  # worked out at the first node that reads ownership
        i = -1
        for nf, nr in nexts:
            i += 1
            if nf is None:
                continue
            g = outputs[i]
            if g is not None:
                meta = nf._output_meta[nr]
                arr = g._data
                if arr.shape != meta[0] or (arr.dtype is not meta[1] and arr.dtype != meta[1]):
                    g = _validate(node, i, g, meta)
            d = deps[nf] - 1
            deps[nf] = d
            if exec_info is not None and not exec_info.get(nf, False) and (
                    captures is None or nf not in captures):
                continue
            buf = get_buffer(nf)
            if buf is None:
                if d == 0:
                    # the only (or last) gradient for nf: its buffer goes on the heap with it
                    n_out = len(nf._output_meta)
                    if n_out == 1 and nr == 0:
                        buf = [g]
                    else:
                        buf = [None] * max(n_out, nr + 1)
                        buf[nr] = g
                    # only a node that may keep or pass on its gradient's memory asks, and a
                    # leaf's only while it has no .grad to add into
                    if nf._reads_ownership and g is not None and (
                            nf.__class__ is not AccumulateGrad or nf.variable._grad is None):
                        if trusted is None:
                            trusted = _trusted(node, create_graph, hooks, modes)
                        heappush(heap, (-nf._seq, tick(), nf, buf, _owned(
                            node, i, g, outputs, grads, owned) << nr
                            if trusted or g is not outputs[i] else 0))
                    else:
                        heappush(heap, (-nf._seq, tick(), nf, buf, 0))
                    continue
                # the last element is the ownership mask of the slots
                buf = buffers[nf] = [None] * max(len(nf._output_meta), nr + 1) + [0]
            if g is not None:
                old = buf[nr]
                if old is None:
                    buf[nr] = g
                    if trusted is None:
                        trusted = _trusted(node, create_graph, hooks, modes)
                    if (trusted or g is not outputs[i]) and g._data.flags.writeable and _owned(
                            node, i, g, outputs, grads, owned):
                        buf[-1] |= 1 << nr
                elif create_graph:
                    buf[nr] = old + g
                elif buf[-1] >> nr & 1:
                    if prof is None and not modes:
                        arr = old._data
                        np.add(arr, g._data, out=arr)
                    else:
                        _add_in_place(old, g)
                else:
                    buf[nr] = old = old + g  # the engine's own from now on
                    if old.__class__ is Tensor and (not modes or _observers_only(modes)):
                        buf[-1] |= 1 << nr
                old = None
            if d == 0:
                del buffers[nf]
                heappush(heap, (-nf._seq, tick(), nf, buf, buf.pop()))  # (mask off the end)
        outputs = grads = g = buf = arr = None
    task.current_node = None
    if prof is not None:
        pop.finish()


def _owned(node: Node, i: int, g: Tensor, outputs: tuple, grads: list, owned: int) -> int:
    """1 if gradient g, which `node` (trusted by the caller) produced for edge i, is memory the
    engine alone holds: new memory, or all the memory of a gradient the node was given (passed
    on, or viewed whole) when that was the engine's (bit k of `owned`); never memory another of
    its results shares (add hands its gradient to both inputs). If g is not outputs[i], the
    engine made it from that (summed to shape, cast). A plain Tensor's array without a base is
    new unless it is a given one: nothing records a graph here and NumPy made it writable.
    (Whether the memory may be written is the reader's test: ownership says who holds it.)"""
    if g.__class__ is not Tensor:
        return 0
    a = g._data
    root = a.base
    if root is None:
        root = a
    elif root.__class__ is not np.ndarray or root.base is not None or root.nbytes != a.nbytes:
        return 0  # part of some memory, or memory NumPy does not own (a buffer it wraps)
    mine = outputs[i]
    if g is not mine:
        return 0 if mine._data is root else 1  # (an engine-made sum or cast of mine)
    if len(outputs) > 1:
        for j, other in enumerate(outputs):
            if j != i and other is not None:
                if other.__class__ is not Tensor:
                    return 0
                oa = other._data
                if oa is root or oa.base is root:
                    return 0
    k = -1  # (a counter, not enumerate: this runs for most results the engine passes on)
    for t in grads:  # a given gradient's memory is owned as it was given
        k += 1
        if t is not None:
            ga = t._data
            if ga is root or (root is not a and ga.base is root):
                return owned >> k & 1
    return 1


def _trusted(node: Node, create_graph: bool, hooks: object, modes: list) -> bool:
    """Whether a node's results may be the engine's alone (NOTE [Gradient ownership]): hooks
    may have seen what came in or what goes out, a dispatch mode every op's result."""
    return node._op_formulas and not create_graph and hooks is None and (
        not modes or _observers_only(modes))  # (each term a bool)


def _observers_only(modes: list) -> bool:
    """True if the active dispatch modes keep none of the results they see (the profiler's)."""
    for m in modes:
        if not getattr(m, "_keeps_no_results", False):
            return False
    return True


def _add_in_place(old: Tensor, g: Tensor) -> None:
    """old += g for an input-buffer slot the engine owns (same shape and dtype: both were
    matched to the input's)."""
    recorder = profiling.active
    if recorder is not None:
        recorder.accumulate_in_place(old._data, g._data)
    elif dispatch_modes():
        old.add_(g)  # an op, so dispatch modes see it (NOTE [Op-level tracing])
    else:
        a = old._data
        np.add(a, g._data, out=a)


def _validate(node: Node, index: int, g: Tensor, meta: tuple) -> Tensor:
    """Match a produced gradient to the shape and dtype of the tensor it is for."""
    shape, dtype = meta
    arr = g._data
    if arr.shape != shape:
        if not _expandable(shape, arr.shape):
            raise RuntimeError(E.INVALID_GRADIENT.format(node.name(), index, list(arr.shape),
                                                         list(shape)))
        g = op_seam.sum_to(g, shape)
    if dtype is not None and g._data.dtype != dtype:  # None: a leaf taking any dtype
        g = g.to(dtype=_rg_dtype(dtype))
    return g


def _rg_dtype(np_dtype):
    from retrograd._dtype import from_numpy_dtype

    return from_numpy_dtype(np_dtype)


def _expandable(shape: tuple, to: tuple) -> bool:
    """True if a tensor of `shape` broadcasts to `to` (so a gradient of `to` sums back to it)."""
    if len(shape) > len(to):
        return False
    for s, t in zip(reversed(shape), reversed(to)):
        if s != t and s != 1:
            return False
    return True


def _tensor_pre_hooks(node: Node, grads: list) -> list:
    if node._lazy_tensor_hooks:
        for hook in node.tensor_pre_hooks():
            out = hook(grads[0])
            if out is not None:
                grads[0] = check_tensor_result(hook, grads[0], out)
    hooks = node._hooks
    if hooks is not None:
        for nr, fn in tuple(hooks.tensor_pre.values()):
            out = fn(grads[nr])
            if out is not None:
                grads[nr] = check_tensor_result(fn, grads[nr], out)
        for nr, fn in tuple(hooks.retains_grad.items()):
            fn(grads[nr])
    return grads


def _pre_hooks(node: Node, grads: list) -> list:
    grads = _tensor_pre_hooks(node, grads)
    hooks = node._hooks
    if hooks is not None and hooks.pre:
        grads = _node_pre_hooks(hooks, grads)
    return grads


def _pre_hooks_on_leaf(node: Node, grads: list, owned: int) -> tuple:
    """_pre_hooks for a leaf's AccumulateGrad: (grads, owned). What the hooks leave in the slot
    is the engine's if no hook kept a reference to it (it is gone once the engine lets go, as
    PyTorch steals what its use count shows nobody else holds; NOTE [Gradient ownership]) and
    it is either the engine's own gradient on its own memory, or a hook's result that is no view
    (one that wraps another tensor's array, as `.detach()` does, is kept as PyTorch keeps it).
    The memory then goes on in a tensor no hook has seen."""
    given = grads[0]
    if given is None:
        return _pre_hooks(node, grads), 0
    given_ref = weakref.ref(given)
    given_arr = given._data
    given = None
    grads = _pre_hooks(node, grads)
    g = grads[0]
    if g is None or g.__class__ is not Tensor or g._grad_fn is not None:
        return grads, 0
    arr = g._data
    if g is given_ref():
        if not owned or arr is not given_arr:
            return grads, 0  # not the engine's, or a hook swapped its memory
    elif arr.base is not None or not arr.flags.writeable:
        return grads, 0  # a view a hook returned: of what, the engine cannot tell
    elif arr is given_arr and (not owned or given_ref() is not None):
        return grads, 0  # the given gradient's memory, which is not the engine's alone
    ref = weakref.ref(g)
    grads[0] = g = None
    if ref() is None:
        grads[0] = _wrap(arr)
        return grads, 1
    grads[0] = ref()
    return grads, 0


def _node_pre_hooks(hooks, grads: list) -> list:
    for fn in tuple(hooks.pre.values()):
        out = fn(tuple(grads))
        if out is not None:
            grads = check_tuple_result(fn, grads, out)
    return grads


def _post_hooks(node: Node, outputs: tuple, grads: list) -> tuple:
    for fn in tuple(node._hooks.post.values()):
        out = fn(tuple(outputs), tuple(grads))
        if out is not None:
            outputs = tuple(check_tuple_result(fn, outputs, out))
    return outputs


def zeros_for(meta: tuple) -> Tensor:
    from retrograd._tensor import _wrap

    shape, dtype = meta
    return _wrap(np.zeros(shape, dtype))
