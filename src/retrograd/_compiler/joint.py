"""The joint graph: the forward and, through retrograd's own autograd, its backward, captured
in one graph (NOTE [Compiler pipeline], stage 1).

The function runs on copies of its tensor inputs and of the module's parameters and buffers
(so capturing changes nothing the user can see), then `autograd.grad` runs over its outputs
with placeholder tangents; every op either runs is recorded. Saved-tensor hooks are switched off
while capturing: inlineable ones are added later, plain ones run eagerly at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._autograd.state import state
from retrograd._compiler.capture import Tracer, Unsupported
from retrograd._compiler.graph import Graph, Node
from retrograd._compiler.tracing import capturing
from retrograd._dtype import dtype
from retrograd._tensor import Tensor, _wrap

# --- flattening nested outputs and arguments ---------------------------------------------------

def flatten(value: Any) -> tuple:
    """(leaves, spec): the leaves of nested tuples, lists and dicts, and how to rebuild it."""
    leaves: list = []

    def go(v):
        if isinstance(v, (tuple, list)):
            return (type(v), tuple(go(x) for x in v))
        if isinstance(v, dict):
            return (dict, tuple((k, go(x)) for k, x in v.items()))
        leaves.append(v)
        return None

    return leaves, go(value)


def unflatten(leaves: list, spec: Any) -> Any:
    it = iter(leaves)

    def go(s):
        if s is None:
            return next(it)
        kind, items = s
        if kind is dict:
            return {k: go(x) for k, x in items}
        if hasattr(kind, "_fields") or hasattr(kind, "n_fields"):  # named tuples, return types
            return kind(tuple(go(x) for x in items)) if hasattr(kind, "n_fields") \
                else kind(*[go(x) for x in items])
        return kind(go(x) for x in items)

    return go(spec)


_PLAIN = (bool, int, float, str, complex)


class RngSnapshot:
    """The states of every live generator (the default one, those among `values` and those the
    function reads from outside), to put back: random ops drawn while capturing or checking
    must not shift what the real run draws."""

    def __init__(self, values: list) -> None:
        from retrograd._ops.random import LIVE_GENERATORS, Generator, default_generator

        gens = [default_generator] + [v for v in values if isinstance(v, Generator)]
        gens += [g for g in list(LIVE_GENERATORS) if not any(g is h for h in gens)]
        self.gens = gens
        self.states = [g.get_state() for g in self.gens]

    def restore(self) -> None:
        for g, s in zip(self.gens, self.states):
            g.set_state(s)


# --- the joint capture ------------------------------------------------------------------------

class Captured:
    """What capture produced: the joint graph and how its placeholders and outputs map to the
    call's tensors."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.n_params = 0
        self.n_inputs = 0
        self.free: list = []          # tensors read but not passed in
        self.primal_grad: list = []   # per primal (params, inputs, free): requires grad
        self.out_spec: Any = None
        self.out_leaves: list = []    # per output leaf: ("tensor", index) or ("const", value)
        self.n_fw_outputs = 0         # tensor outputs of the function
        self.mutated: list = []       # primal indices whose memory the function writes
        self.diff_outputs: list = []  # indices of tensor outputs that get a tangent
        self.diff_primals: list = []  # primal indices that get a gradient
        self.rng_after_forward: Any = None  # (generator, state) pairs once the forward ran


def _copy_leaf(t: Tensor) -> Tensor:
    c = _wrap(np.array(t._data, copy=True))
    if t._requires_grad:
        c._requires_grad = True
    return c


def capture_joint(fn: Callable, args: tuple, kwargs: dict, params: list,
                  want_backward: bool) -> Captured:
    """Capture `fn(*args, **kwargs)`. `params`: (dict, key, tensor) slots of a module's
    parameters and buffers, swapped for copies while capturing."""
    from retrograd import autograd

    cap = Captured()
    tracer = Tracer()
    cap.graph = tracer.graph
    leaves, spec = flatten((args, kwargs))
    copies = []
    for slot, key, t in params:
        c = _copy_leaf(t)
        copies.append(c)
        tracer.add_input(c, "primals")
        slot[key] = c
    cap.n_params = len(params)
    new_leaves = []
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            c = _copy_leaf(leaf)
            copies.append(c)
            tracer.add_input(c, "primals")
            new_leaves.append(c)
        else:
            new_leaves.append(leaf)
    cap.n_inputs = len(copies) - cap.n_params
    call_args, call_kwargs = unflatten(new_leaves, spec)
    rng = RngSnapshot(leaves)
    hooks = state.saved_hooks
    state.saved_hooks = ()
    try:
        with tracer, capturing():
            out = fn(*call_args, **call_kwargs)
            out_leaves, cap.out_spec = flatten(out)
            out_nodes: list = []
            for leaf in out_leaves:
                if isinstance(leaf, Tensor):
                    cap.out_leaves.append(("tensor", len(out_nodes)))
                    out_nodes.append((tracer.node_of(leaf), leaf))
                elif leaf is None or type(leaf) in _PLAIN or isinstance(leaf, dtype):
                    cap.out_leaves.append(("const", leaf))
                else:
                    raise Unsupported(f"an output of type {type(leaf).__name__}")
            tracer.backward_phase = True
            after = RngSnapshot(leaves)
            cap.rng_after_forward = list(zip(after.gens, after.states))
            primals = copies + [t for _, t in tracer.free]
            grads = []
            if want_backward and state.grad_enabled:
                diff_out = [i for i, (_, t) in enumerate(out_nodes)
                            if t._requires_grad and t._data.dtype.kind in "fV"]
                diff_in = [i for i, t in enumerate(primals) if t._requires_grad]
                if diff_out and diff_in:
                    cap.diff_outputs, cap.diff_primals = diff_out, diff_in
                    tangents = []
                    for i in diff_out:
                        tan = _wrap(np.ones_like(out_nodes[i][1]._data))
                        # a tangent that requires grad makes every backward step build a
                        # graph, so it runs ops (the fast paths that skip them are not seen)
                        tan._requires_grad = True
                        tracer.add_input(tan, "tangents")
                        tangents.append(tan)
                    # the compiled backward is once_differentiable: its formulas may record
                    # the fused ops eager's backward runs (normalization, attention)
                    state.first_order_capture = True
                    try:
                        result = autograd.grad([out_nodes[i][1] for i in diff_out],
                                               [primals[i] for i in diff_in], tangents,
                                               allow_unused=True, create_graph=True)
                    finally:
                        state.first_order_capture = False
                    grads = [None if g is None else tracer.node_of(g) for g in result]
    finally:
        state.saved_hooks = hooks
        for (slot, key, t) in params:
            slot[key] = t
        rng.restore()
        tracer.restore()
    cap.free = [t for _, t in tracer.free]
    primal_nodes = [n for n in tracer.inputs if n.target == "primals"]
    all_primals = primal_nodes + [n for n, _ in tracer.free]
    cap.primal_grad = [t._requires_grad for t in copies + cap.free]
    # written inputs: their final value is an output, copied back into them at run time
    mutated_vals = []
    for placeholder, root in tracer.mutated.values():
        cap.mutated.append(all_primals.index(placeholder))
        mutated_vals.append(tracer.root_value(root))
    for i in cap.mutated:
        # an input that requires grad written under no_grad (an optimizer's update in a
        # compiled training step) is fine while no compiled backward reads the inputs: the
        # write-back bumps its version as eager's write does
        if cap.primal_grad[i] and grads:
            raise Unsupported("an in-place write to an input that requires grad")
    cap.n_fw_outputs = len(out_nodes)
    # outputs: function outputs, written inputs' new values, gradients (None where unused)
    cap.graph.output(tuple([n for n, _ in out_nodes] + mutated_vals + grads))
    cap.graph.erase_unused()
    from retrograd._compiler.simplify import simplify

    simplify(cap.graph)
    return cap


def tangent_nodes(graph: Graph) -> list:
    return [n for n in graph.placeholders() if n.target == "tangents"]


def primal_nodes(graph: Graph) -> list:
    return [n for n in graph.placeholders() if n.target != "tangents"]


def is_node(x: Any) -> bool:
    return isinstance(x, Node)
