"""Running a compiled graph: the forward as NumPy code, the backward as one node,
CompiledFunctionBackward, in retrograd's ordinary autograd graph (NOTE [Compiler pipeline],
stage 6). Because the node is a custom Function's, `.grad` goes through AccumulateGrad, tensor
and node hooks fire, and saved inputs are checked against in-place changes, as in eager.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd._autograd.state import state
from retrograd._tensor import Tensor, _wrap
from retrograd.autograd.function import Function, once_differentiable


class Entry:
    """One compiled variant: generated forward (and backward) and how to call them."""

    def __init__(self) -> None:
        self.forward: Any = None       # Generated
        self.backward: Any = None      # Generated or None (inference)
        self.n_outputs = 0             # tensor outputs of the function
        self.mutated: list = []        # primal indices written by the function
        self.saved_primal: list = []   # per saved value: primal index, or None (intermediate)
        self.diff_outputs: list = []
        self.diff_primals: list = []
        self.n_primals = 0
        self.out_spec: Any = None
        self.out_leaves: list = []
        self.inline_hooks = False      # the forward already packs (saved-tensor hooks inlined)
        self.eager_reason: str | None = None  # set: run this variant eagerly
        self.free: list = []
        self.free_guards: list = []  # per free tensor: its guard when captured
        self.saved_names: list = []    # the backward's saved inputs (packed ones included)
        self.backward_free: list = []  # indices into free of tensors the backward reads
        # dynamic shapes (NOTE [Dynamic shapes]): per symbol, the (primal index, dimension)
        # its size is read from; the backward gets the sizes after its other inputs
        self.sym_sources: list = []

    def sym_sizes(self, primals: list) -> list:
        """The symbols' sizes in a call with these primal arrays."""
        return [primals[i].shape[d] for i, d in self.sym_sources]


def _write_back(entry: Entry, primals: tuple | list, values: tuple) -> None:
    for i, new in zip(entry.mutated, values):
        t = primals[i]
        if new is not t._data:  # (the generated code may have written it in place)
            np.copyto(t._data, new)
        if t._version_counter is not None:
            t._version_counter.version += 1


def _in_order(saved_primal: list, inputs: list, intermediates: list) -> list:
    """The backward's saved values: the saved inputs and the intermediates, interleaved."""
    it, pt = iter(intermediates), iter(inputs)
    return [next(it) if i is None else next(pt) for i in saved_primal]


class CompiledFunction(Function):
    """The compiled forward and backward as one custom Function (its node prints as
    CompiledFunctionBackward, torch's name for the same thing)."""

    @staticmethod
    def forward(ctx: Any, entry: Entry, *primals: Tensor) -> tuple:
        outs = entry.forward.fn(*[p._data for p in primals])
        n, m = entry.n_outputs, len(entry.mutated)
        _write_back(entry, primals, outs[n:n + m])
        if state.saved_hooks:
            # saved-tensor hooks run on every saved value, as eager's nodes run them
            saved = [primals[i] if i is not None else _wrap(arr)
                     for i, arr in zip(entry.saved_primal, outs[n + m:])]
            ctx.save_for_backward(*saved)
            ctx.intermediates = None
        else:
            # the intermediates are the generated code's own arrays: no Tensor, no
            # SavedVariable (nothing else can write them); the inputs it saves are saved as
            # eager saves them, so writing one in place is still detected
            ctx.save_for_backward(*[primals[i] for i in entry.saved_primal if i is not None])
            ctx.intermediates = [arr for i, arr in zip(entry.saved_primal, outs[n + m:])
                                 if i is None]
        ctx.entry = entry
        if entry.sym_sources:
            ctx.syms = [primals[i]._data.shape[d] for i, d in entry.sym_sources]
        results = tuple(_wrap(a) for a in outs[:n])
        non_diff = [r for i, r in enumerate(results) if i not in entry.diff_outputs]
        if non_diff:
            ctx.mark_non_differentiable(*non_diff)
        return results

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, *grads: Tensor) -> tuple:
        entry = ctx.entry
        saved = [t._data for t in ctx.saved_tensors]  # raises if the graph was freed
        inter = ctx.intermediates
        if inter is not None:
            saved = _in_order(entry.saved_primal, saved, inter)
        task = state.graph_task
        if task is not None and not task.keep_graph:
            # the engine would release them after this call; now, the generated backward
            # frees each saved value at its last use, as eager frees a node's after it runs
            ctx.release_variables()
            ctx.intermediates = inter = None
        saved += [grads[i]._data for i in entry.diff_outputs]
        saved += [entry.free[i]._data for i in entry.backward_free]
        if entry.sym_sources:
            saved += ctx.syms
        result = entry.backward.fn(saved)
        out: list = [None] * (entry.n_primals + 1)
        for i, g in zip(entry.diff_primals, result):
            if g is not None:
                out[i + 1] = _wrap(g)
        return tuple(out)


def run_entry(entry: Entry, primals: list) -> Any:
    """Call the compiled variant on the call's tensors; the function's output structure."""
    if entry.backward is None:
        outs = entry.forward.fn(*[p._data for p in primals])
        n = entry.n_outputs
        _write_back(entry, primals, outs[n:n + len(entry.mutated)])
        tensors = [_wrap(a) for a in outs[:n]]
    elif entry.inline_hooks:
        # the forward packs its saved values itself: the hooks must not run on them again
        hooks = state.saved_hooks
        state.saved_hooks = ()
        try:
            tensors = list(CompiledFunction.apply(entry, *primals))
        finally:
            state.saved_hooks = hooks
    else:
        tensors = list(CompiledFunction.apply(entry, *primals))
    from retrograd._compiler.joint import unflatten

    leaves = [tensors[v] if kind == "tensor" else v for kind, v in entry.out_leaves]
    return unflatten(leaves, entry.out_spec)
