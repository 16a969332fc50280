"""Build one compiled variant: the stages of NOTE [Compiler pipeline] in order."""

from __future__ import annotations

import logging
from collections.abc import Callable

from retrograd._autograd.state import state
from retrograd._compiler import cache, config
from retrograd._compiler.graph import Graph
from retrograd._compiler.joint import capture_joint
from retrograd._compiler.partition import partition
from retrograd._compiler.runtime import Entry
from retrograd._compiler.verify import check_captured, check_perturbed

code_log = logging.getLogger("retrograd.graph_code")


def log_graph(title: str, graph: Graph, name: str = "forward") -> None:
    if code_log.isEnabledFor(logging.INFO):
        code_log.info("===== %s =====\n%s", title, graph.python_code(name))


def build(fn: Callable, args: tuple, kwargs: dict, slots: list, label: str,
          index_key: str | None = None, dynamic: tuple | None = None) -> Entry:
    """`index_key`: where to record the variant in the pre-capture index once it passed its
    checks (NOTE [Pre-capture index]). `dynamic`: when `args` are a call tiled to probe sizes
    (NOTE [Dynamic shapes]), (their primes, the symbols' sources as (argument tensor ordinal,
    dimension, symbol), (args, kwargs, primes) of the same call tiled to other probe sizes)."""
    from retrograd._compiler.api import _tensor_guard
    from retrograd._compiler.hooks import current_inlineable, inline_hooks

    cap, part, primals = _capture(fn, args, kwargs, slots)
    if part.backward is None:
        _mark_written_back(part.forward, [primals[i].name for i in cap.mutated],
                           cap.n_fw_outputs)
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
    other = None
    if dynamic is not None:  # the same call at the other probe sizes
        other = _capture(fn, dynamic[2][0], dynamic[2][1], slots)[1]
    n_params = cap.n_params
    hook_key = None
    if hooks is not None and part.backward is not None:
        log_graph("Forward graph pre saved_tensors_hooks inlining", part.forward)
        log_graph("Backward graph pre saved_tensors_hooks inlining", part.backward, "backward")
        # parameters: a module's, and tensors requiring grad the function reads from outside
        static = set(primal_names[:n_params]) | {
            p.name for p in primals if p.target == "free" and p.meta.get("requires_grad")}
        hook_key = inline_hooks(part, hooks, primal_names, static)
        entry.inline_hooks = True
        if other is not None:  # (the hook graphs traced at the other sizes too)
            inline_hooks(other, hooks, primal_names, static)
    if dynamic is not None:
        from retrograd._compiler.symbolic import generalize_part

        primes, sources, (_, _, other_primes) = dynamic
        sources = [(n_params + o, d, k) for o, d, k in sources]
        entry.sym_sources = generalize_part(part, primes, sources, primal_names, other,
                                            other_primes)
    log_graph("Forward graph", part.forward)
    if part.backward is not None:
        log_graph("Backward graph", part.backward, "backward")
    entry.saved_names = list(part.saved)
    entry.backward_free = [primal_names.index(f) - (len(primal_names) - len(cap.free))
                           for f in part.backward_free]
    entry.saved_primal = [primal_names.index(s) if s in primal_names else None
                          for s in part.saved]
    entry.forward, entry.backward, graph_key = cache.generate_pair(part, label, hook_key)
    if config.verify:
        # with hooks inlined the backward reads packed values, which capture did not see
        check_captured(entry, part, cap, check_backward=hooks is None)
        check_perturbed(entry, fn, args, kwargs, slots, cap, compare_grads=hooks is None)
    if index_key is not None:
        try:
            cache.record(index_key, entry, graph_key)
        except Exception as e:  # noqa: BLE001 - not indexed: the variant itself is fine
            logging.getLogger("retrograd.compiler").info("variant of %s not indexed: %r",
                                                         label, e)
    return entry


def _capture(fn: Callable, args: tuple, kwargs: dict, slots: list) -> tuple:
    """(capture, its partition, the primal placeholders): stages 1 to 3."""
    cap = capture_joint(fn, args, kwargs, slots, state.grad_enabled)
    placeholders = cap.graph.placeholders()
    primals = [n for n in placeholders if n.target in ("primals", "free")]
    tangents = [n for n in placeholders if n.target == "tangents"]
    n_fw = cap.n_fw_outputs + len(cap.mutated)
    return cap, partition(cap.graph, primals, tangents, n_fw), primals


def _mark_written_back(forward, names: list, first: int) -> None:
    """With no compiled backward to read them, a written input's last reader may write the
    input's new value into the input itself (NOTE [Compiler pipeline], stage 5): mark each
    written input's placeholder with the position of its new value among the outputs."""
    by_name = {n.name: n for n in forward.placeholders()}
    for j, name in enumerate(names):
        if name in by_name:
            by_name[name].meta["written_back"] = first + j
