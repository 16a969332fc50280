"""NOTE [Reference backward]
The backward of a formula node in plain Python, with no generated code: unpack every saved
value with SavedVariable.unpack, call the formulas of the inputs that need a gradient, release
the saved values. It is what the generated backward (NOTE [Fast backward]) does with its
inlined shortcuts taken out, so the two must give the same gradients bit for bit; a test runs
the op samples through both. Set RETROGRAD_REFERENCE_BACKWARD=1 before importing retrograd to
use it everywhere (to rule the generated code in or out when a gradient looks wrong)."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from retrograd._autograd.saved import SavedVariable
from retrograd._ops import dispatch
from retrograd._tensor import _wrap

ENABLED = os.environ.get("RETROGRAD_REFERENCE_BACKWARD", "") == "1"


def reference_backward(plan, has_lists: bool, calls: tuple, arrays: bool = False,
                       fallback: Callable | None = None, qualname: str | None = None) -> Callable:
    """backward(node, grads, release, needed), as registry._compile_backward's function of the
    same arguments computes it."""
    from retrograd._autograd.engine import zeros_for
    from retrograd._ops.registry import _flatten_grads, _needed_for, _release_saved

    n_inputs = len(plan.mask)
    uses_grads = plan.uses_grads

    def backward(node, grads, release, needed):
        if arrays and dispatch.mode_stack:
            return fallback(node, grads, release, needed)
        values = [_unpack(s, node, arrays) for s in node._saved]
        g = grads[0]
        if g is None:
            g = zeros_for(node._output_meta[0])
        incoming = g
        if arrays:
            g = g._data
        n = plan.mask if needed is None else _needed_for(node, needed)
        gs = None
        if uses_grads:
            gs = tuple([None if x is None else x._data for x in grads]) if arrays \
                else tuple(grads)
        # a formula's argument positions index [*saved values, grad, grads, output_mask]
        args = [*values, g, gs, n]
        results = [None] * n_inputs
        for f, idx in calls:
            if not any(n[i] for i in f.inputs):
                continue
            out = f.fn(*[args[j] for j in idx])
            if len(f.inputs) == 1:
                results[f.inputs[0]] = out
            else:
                for pos, i in enumerate(f.inputs):
                    if n[i]:
                        results[i] = out[pos]
        if arrays:
            results = [r if r is None else incoming if r is g else _wrap(np.asarray(r))
                       for r in results]
        if release:
            _release_saved(node._saved)
        return _flatten_grads(node._mask, tuple(results)) if has_lists else tuple(results)

    backward.__qualname__ = (qualname or "backward") + " (reference)"
    return backward


def _unpack(saved, node, arrays: bool):
    if saved.__class__ is SavedVariable:
        t = saved.unpack(node)
        return t._data if arrays and t is not None else t
    if saved.__class__ is tuple and saved and saved[0].__class__ is SavedVariable:
        return [sv.unpack(node) for sv in saved]  # a Tensor[] argument
    return saved
