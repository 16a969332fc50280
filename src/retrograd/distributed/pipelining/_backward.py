"""A pipeline stage's backward: whole, or split into an input pass and a later weight pass.

NOTE [Split backward]
Zero-bubble schedules run a stage's backward in two parts. The input pass (I) computes the
gradients of the stage's inputs, which the previous stage is waiting for, and records, at the
"intermediate" nodes where each weight's part of the graph meets the input path, the gradients
arriving there. The weight pass (W), run later to fill pipeline bubbles, starts from those
intermediates (as GradientEdges) and computes only the weight gradients.

Intermediates and weights are grouped so that every weight belongs to exactly one group (groups
whose intermediates overlap are merged); a weight reached through two intermediates is therefore
differentiated once, where PyTorch can count it twice. A recorded intermediate with several
outputs contributes one edge per output that received a gradient.
"""

from __future__ import annotations

import collections
import weakref
from collections.abc import Iterable
from typing import Any

from retrograd import autograd
from retrograd._tensor import Tensor
from retrograd.autograd.graph import GradientEdge, _grad_fn_or_grad_acc, _iter_graph

REQUIRES_OUTPUT_GRADS = "stage_backward_weight: a gradient edge requires output gradients"


def construct_reverse_graph(roots: list) -> dict:
    """node -> the nodes that feed gradients into it (edges reversed), from `roots` down."""
    reverse: dict = collections.defaultdict(list)
    for node in _iter_graph(roots):
        for fn, _ in node.next_functions:
            if fn is not None:
                reverse[fn].append(node)
    return reverse


def reverse_closure(roots: list, targets: set, reverse: dict) -> tuple:
    """Nodes reachable from `roots` along reversed edges, stopping at (and collecting) targets."""
    closure, hit = set(), set()
    queue = collections.deque()
    for node in roots:
        if node is not None and node not in closure:
            closure.add(node)
            queue.append(node)
    while queue:
        node = queue.popleft()
        for fn in reverse[node]:
            if fn is None or fn in closure:
                continue
            if fn in targets:
                hit.add(fn)
                continue
            closure.add(fn)
            queue.append(fn)
    return closure, hit


def get_param_groups(inputs: list, params: list, reverse: dict) -> list:
    """Groups {"params", "intermediates"}: each weight with the intermediates where its
    subgraph meets the input path; groups sharing an intermediate are merged (union-find)."""
    input_closure, _ = reverse_closure(inputs, set(), reverse)
    parent: dict = {}

    def find(x):
        while parent[x] is not x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict = {}  # intermediate -> a param that reaches it
    groups_of: dict = {}
    for param in params:
        if param in parent:
            continue  # the same weight listed twice
        parent[param] = param
        _, hit = reverse_closure([param], input_closure, reverse)
        groups_of[param] = set(hit)
        for node in hit:
            if node in owner:
                a, b = find(owner[node]), find(param)
                if a is not b:
                    parent[b] = a
            else:
                owner[node] = param
    merged: dict = {}
    order = []
    for param in groups_of:
        root = find(param)
        if root not in merged:
            merged[root] = {"params": [], "intermediates": []}
            order.append(root)
        group = merged[root]
        group["params"].append(param)
        for node in groups_of[param]:
            if node not in group["intermediates"]:
                group["intermediates"].append(node)
    return [merged[r] for r in order]


def stage_backward_input(stage_outputs_or_loss: list, output_grads: list | None,
                         input_values: list, weights: Iterable) -> tuple:
    """Input gradients only (the I pass); returns (input grads, param groups for the W pass)."""
    output_nodes = [n for n in map(_grad_fn_or_grad_acc, stage_outputs_or_loss) if n is not None]
    input_nodes = [n for n in map(_grad_fn_or_grad_acc,
                                  [v for v in input_values if isinstance(v, Tensor)])
                   if n is not None]
    weight_nodes = [n for n in map(_grad_fn_or_grad_acc, weights) if n is not None]
    reverse = construct_reverse_graph(output_nodes)
    param_groups = get_param_groups(input_nodes, weight_nodes, reverse)

    # the input path, already differentiated here: the weight pass must not flow into it
    input_closure, _ = reverse_closure(input_nodes, set(), reverse)
    input_path = weakref.WeakSet(input_closure)
    handles = []
    for group in param_groups:
        group["grads"] = [None] * len(group["intermediates"])
        group["input_path"] = input_path
        for i, node in enumerate(group["intermediates"]):
            def record(grad_outputs, group=group, i=i):
                group["grads"][i] = tuple(grad_outputs)

            handles.append(node.register_prehook(record))

    if output_grads is None:
        from retrograd._ops.creation import ones_like

        output_grads = [ones_like(t) for t in stage_outputs_or_loss]
    needing = [v for v in input_values if isinstance(v, Tensor) and v.requires_grad]
    dinputs: tuple = ()
    try:
        if needing:
            dinputs = autograd.grad(stage_outputs_or_loss, inputs=needing,
                                    grad_outputs=output_grads, retain_graph=True,
                                    allow_unused=True)
            for inp, g in zip(needing, dinputs):
                if g is None:
                    continue
                if inp.grad is None:
                    inp.grad = g
                else:
                    inp.grad = inp.grad + g
        elif param_groups:
            # stage 0 has no input to differentiate; the weight pass still needs the recorded
            # gradients, so run the graph down to the intermediates
            edges = [GradientEdge(n, 0) for g in param_groups for n in g["intermediates"]]
            autograd.grad(stage_outputs_or_loss, inputs=edges, grad_outputs=output_grads,
                          retain_graph=True, allow_unused=True)
    finally:
        for h in handles:
            h.remove()
    # the outputs are not needed by the weight pass: detaching lets their graph be freed
    for t in stage_outputs_or_loss:
        t.detach_()
    return tuple(dinputs), param_groups


def stage_backward_weight(weights: Iterable, param_groups: list,
                          retain_graph: bool = False) -> tuple:
    """Weight gradients from the recorded intermediates (the W pass), accumulated into .grad."""
    weights = list(weights)
    acc_to_weight = {}
    for index, w in enumerate(weights):
        acc_to_weight[_grad_fn_or_grad_acc(w)] = (w, index)
    for group in param_groups:
        assert "grads" in group, REQUIRES_OUTPUT_GRADS + " (run stage_backward_input first)"
        edges, grads = [], []
        for recorded, node in zip(group.pop("grads"), group.pop("intermediates")):
            if recorded is None:
                continue
            for nr, g in enumerate(recorded):
                if g is not None:
                    edges.append(GradientEdge(node, nr))
                    grads.append(g)
        if not edges:
            continue
        params = group["params"]
        starts = {e.node for e in edges}
        blocked = {n for n in group.pop("input_path", ()) if n not in starts}
        dweights = _grad_blocked(edges, params, grads, retain_graph, blocked)
        for acc, dw in zip(params, dweights):
            if dw is None:
                continue
            weight, _ = acc_to_weight[acc]
            if weight.grad is None:
                weight.grad = dw
            else:
                weight.grad = weight.grad + dw
    return tuple(w.grad for w in weights)


def _grad_blocked(edges: list, params: list, grads: list, retain_graph: bool,
                  blocked: set) -> tuple:
    """autograd.grad from intermediate edges to weight edges, never entering `blocked` nodes."""
    from retrograd._autograd.engine import run_backward

    roots = [(e.node, e.output_nr) for e in edges]
    captured = run_backward(roots, list(grads), retain_graph, False,
                            [(p, 0) for p in params], accumulate=False, blocked=blocked)
    return tuple(captured)


def _debug_info(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"Tensor(shape={list(value.shape)}, dtype={value.dtype}, " \
               f"requires_grad={value.requires_grad})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_debug_info(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_debug_info(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _extract(output_val, grad_val, outs: list, grads: list) -> None:
    if isinstance(output_val, Tensor):
        if not output_val.requires_grad and output_val.grad_fn is None:
            return
        if not isinstance(grad_val, (Tensor, type(None))):
            raise AssertionError(f"Expected Tensor or None gradient but got {type(grad_val)}")
        outs.append(output_val)
        grads.append(grad_val)
    elif isinstance(output_val, (tuple, list)):
        if grad_val is None:
            return
        if not isinstance(grad_val, (tuple, list)):
            raise AssertionError(f"grad_value expected to have type {type(output_val)} but got "
                                 f"{type(grad_val)}")
        if len(output_val) != len(grad_val):
            raise AssertionError(f"Expected len(output_val) == len(grad_val), got "
                                 f"{len(output_val)} != {len(grad_val)}")
        for ov, gv in zip(output_val, grad_val):
            _extract(ov, gv, outs, grads)
    elif isinstance(output_val, dict):
        if grad_val is None:
            return
        if not isinstance(grad_val, dict):
            raise AssertionError(f"Expected dict, got {type(grad_val)}")
        if set(output_val) != set(grad_val):
            raise AssertionError(f"Expected keys {set(output_val)}, got {set(grad_val)}")
        for k in output_val:
            _extract(output_val[k], grad_val[k], outs, grads)


def stage_backward(stage_output: Any, output_grads: Any, input_values: list,
                   outputs_with_grads_idxs: list | None = None) -> tuple:
    """Full backward of a stage: accumulate weight grads, return (and clear) input grads."""
    if outputs_with_grads_idxs is not None:
        stage_output = [stage_output[i] for i in outputs_with_grads_idxs]
        output_grads = [output_grads[i] for i in outputs_with_grads_idxs]
    try:
        outs: list = []
        grads: list = []
        _extract(stage_output, output_grads, outs, grads)
        autograd.backward(outs, grad_tensors=grads)
        grad_inputs = []
        for val in input_values:
            if isinstance(val, Tensor):
                grad_inputs.append(val.grad)
                val.grad = None  # handed to the previous stage; nothing accumulates here
            else:
                grad_inputs.append(None)
    except Exception as e:
        raise RuntimeError(
            "\nFailed to run stage backward:\n"
            f"Stage output: {_debug_info(stage_output)}\n"
            f"Output gradient: {_debug_info(output_grads)}\n"
            f"Input: {_debug_info(input_values)}\n") from e
    return tuple(grad_inputs)
