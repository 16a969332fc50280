"""Anomaly mode's work: remember where each node was created; explain and check in backward."""

from __future__ import annotations

import traceback
import warnings

import numpy as np

from retrograd._autograd.anomaly import anomaly
from retrograd._autograd.frames import is_internal
from retrograd._autograd.node import Node

NAN_MESSAGE = "Function '{}' returned nan values in its {}th output."


def record_forward_trace(node: Node) -> None:
    """Keep the stack of the forward call that created `node` (only while anomaly mode is on),
    up to the user's call: retrograd's own frames at its end are left out."""
    stack = traceback.extract_stack()
    end = len(stack)
    while end and is_internal(stack[end - 1].filename):
        end -= 1
    node._anomaly = "".join(traceback.format_list(stack[:end]))


def call_with_anomaly(node: Node, grads: list) -> tuple:
    try:
        outputs = node.apply(grads)
    except Exception:
        trace = getattr(node, "_anomaly", None)
        if trace:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that "
                          f"caused the error:\n{trace}", UserWarning, stacklevel=2)
        raise
    if anomaly.check_nan:
        for i, g in enumerate(outputs):
            if g is not None and g._data.dtype.kind in "fV" and np.isnan(
                    np.asarray(g._data, dtype=np.float64)).any():
                raise RuntimeError(NAN_MESSAGE.format(node.name(), i))
    return outputs
