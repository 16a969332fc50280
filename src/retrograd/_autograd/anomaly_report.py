"""Anomaly mode's work: remember where each node was created; explain and check in backward.

A node made while anomaly mode is on keeps (forward stack, parent): the parent is the node
whose backward was running when it was made (double backward), so an error deep in a
higher-order graph is reported with the chain of forward calls that led to it.
"""

from __future__ import annotations

import sys
import traceback

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._autograd.anomaly import anomaly
from retrograd._autograd.frames import is_internal
from retrograd._autograd.node import Node
from retrograd._autograd.state import state

NAN_MESSAGE = "Function '{}' returned nan values in its {}th output."
TRACE_MESSAGE = "Error detected in {}. Traceback of forward call that caused the error:\n{}"
NO_TRACE_MESSAGE = ("Error detected in {}. No forward pass information available. Enable detect "
                    "anomaly during forward pass for more information.")
PARENT_MESSAGE = ("\n\nPrevious calculation was induced by {}. Traceback of forward call that "
                  "induced the previous calculation:\n{}")


def record_forward_trace(node: Node) -> None:
    """Keep the stack of the forward call that created `node` (only while anomaly mode is on),
    up to the user's call: retrograd's own frames at its end are left out."""
    stack = traceback.extract_stack()
    end = len(stack)
    while end and is_internal(stack[end - 1].filename):
        end -= 1
    task = state.graph_task
    parent = task.current_node if task is not None else None
    node._anomaly = ("".join(traceback.format_list(stack[:end])), parent)


def _warn_or_print(message: str) -> None:
    # the node's own error is the one to raise: a warning filter turning this into an error
    # must not replace it, so the report then goes to stderr
    try:
        _ws.warn(message, UserWarning, stacklevel=4)
    except Warning:
        print(f"Warning: {message}", file=sys.stderr)


def report(node: Node) -> None:
    """Warn where `node` was made, then where each node whose backward made it was made."""
    record = getattr(node, "_anomaly", None)
    if record is None:
        _warn_or_print(NO_TRACE_MESSAGE.format(node.name()))
        return
    _warn_or_print(TRACE_MESSAGE.format(node.name(), record[0]))
    parent = record[1]
    while parent is not None:
        record = getattr(parent, "_anomaly", None)
        if record is None:
            _warn_or_print(NO_TRACE_MESSAGE.format(parent.name()))
            return
        _warn_or_print(PARENT_MESSAGE.format(parent.name(), record[0]))
        parent = record[1]


def call_with_anomaly(node: Node, grads: list) -> tuple:
    try:
        outputs = node.apply(grads)
        if anomaly.check_nan:
            for i, g in enumerate(outputs):
                if g is not None and g._data.dtype.kind in "fV" and np.isnan(
                        np.asarray(g._data, dtype=np.float64)).any():
                    raise RuntimeError(NAN_MESSAGE.format(node.name(), i))
    except Exception:
        report(node)
        raise
    return outputs
