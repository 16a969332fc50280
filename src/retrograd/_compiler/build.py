"""Build one compiled variant: the stages of NOTE [Compiler pipeline] in order."""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from retrograd._autograd.state import state
from retrograd._compiler import cache, config
from retrograd._compiler.capture import Unsupported
from retrograd._compiler.graph import Graph
from retrograd._compiler.joint import capture_joint
from retrograd._compiler.partition import partition
from retrograd._compiler.runtime import Entry

code_log = logging.getLogger("retrograd.graph_code")


def log_graph(title: str, graph: Graph, name: str = "forward") -> None:
    if code_log.isEnabledFor(logging.INFO):
        code_log.info("===== %s =====\n%s", title, graph.python_code(name))


def build(fn: Callable, args: tuple, kwargs: dict, slots: list, label: str) -> Entry:
    from retrograd._compiler.api import _tensor_guard
    from retrograd._compiler.hooks import current_inlineable, inline_hooks

    cap = capture_joint(fn, args, kwargs, slots, state.grad_enabled)
    graph = cap.graph
    placeholders = graph.placeholders()
    primals = [n for n in placeholders if n.target in ("primals", "free")]
    tangents = [n for n in placeholders if n.target == "tangents"]
    n_fw = cap.n_fw_outputs + len(cap.mutated)
    part = partition(graph, primals, tangents, n_fw)
    entry = Entry()
    entry.n_outputs = cap.n_fw_outputs
    entry.mutated = cap.mutated
    entry.diff_outputs = cap.diff_outputs
    entry.diff_primals = cap.diff_primals
    entry.n_primals = len(primals)
    entry.out_spec, entry.out_leaves = cap.out_spec, cap.out_leaves
    entry.free = cap.free
    entry.free_guards = [_tensor_guard(t) for t in cap.free]
    hooks = current_inlineable() if part.backward is not None else None
    primal_names = [p.name for p in primals]
    n_params = cap.n_params
    hook_key = None
    if hooks is not None:
        log_graph("Forward graph pre saved_tensors_hooks inlining", part.forward)
        log_graph("Backward graph pre saved_tensors_hooks inlining", part.backward, "backward")
        hook_key = inline_hooks(part, hooks, primal_names, n_params, n_fw)
        entry.inline_hooks = True
    log_graph("Forward graph", part.forward)
    if part.backward is not None:
        log_graph("Backward graph", part.backward, "backward")
    entry.saved_primal = [primal_names.index(s) if s in primal_names else None
                          for s in part.saved]
    entry.forward, entry.backward = cache.generate_pair(part, label, hook_key)
    if config.verify:
        _verify(entry, part, primals, tangents)
    return entry


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fV":
        a32, b32 = a.astype(np.float64), b.astype(np.float64)
        return bool(np.allclose(a32, b32, rtol=1e-5, atol=1e-6, equal_nan=True))
    return bool(np.array_equal(a, b))


def _verify(entry: Entry, part, primals: list, tangents: list) -> None:
    """Run the generated code once on the captured values and compare with them."""
    fw_graph = part.forward
    inputs = [p.meta["val"] for p in fw_graph.placeholders()]
    expected = [None if o is None else o.meta["val"] for o in fw_graph.output_node.args[0]]
    got = entry.forward.fn(*[np.array(x, copy=True) for x in inputs])
    for i, (g, e) in enumerate(zip(got, expected)):
        if not _same(g, e):
            raise Unsupported(f"the generated forward differs from eager at output {i}")
    if part.backward is None:
        return
    bw_graph = part.backward
    inputs = [p.meta["val"] for p in bw_graph.placeholders()]
    expected = [None if o is None else o.meta["val"] for o in bw_graph.output_node.args[0]]
    got = entry.backward.fn(*[np.array(x, copy=True) for x in inputs])
    for i, (g, e) in enumerate(zip(got, expected)):
        if not _same(g, e):
            raise Unsupported(f"the generated backward differs from eager at gradient {i}")
