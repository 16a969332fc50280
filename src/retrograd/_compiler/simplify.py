"""Rewrites of the joint graph before partition (NOTE [Compiler pipeline], between stages 2
and 3). Each keeps every value bit for bit what eager computes.

gelu's erf: exact gelu computes erf(x / sqrt 2) inside its kernel, and its derivative computes
the same erf again in the backward (erf costs a dozen NumPy passes here). When the backward's
erf(x * SQRT1_2) is in the graph, it moves to the forward and gelu is computed from it with the
kernel's own arithmetic (x * 0.5 * (erf + 1)); the erf is then a saved value, computed once.
"""

from __future__ import annotations

import numpy as np

from retrograd._compiler.graph import Graph, Node
from retrograd._compiler.helpers import Helper
from retrograd._ops.activation import SQRT1_2
from retrograd._ops.dispatch import OpOverload


def _gelu_from_erf(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    # activation._gelu's exact branch, given e = erf(x * SQRT1_2), which is not written
    out = np.asarray(np.multiply(x, 0.5))
    out *= np.add(e, 1)
    return out


GELU_FROM_ERF = Helper("retrograd.gelu_from_erf", _gelu_from_erf, "_gelu_from_erf")


def _op_name(node: Node) -> str | None:
    if node.op != "call_function" or not isinstance(node.target, OpOverload) or \
            node.meta.get("casts"):
        return None
    return node.target._op.name


def share_gelu_erf(graph: Graph) -> None:
    for node in list(graph.nodes):
        if _op_name(node) != "gelu" or node.args[1:] != ("none",):
            continue
        val = node.meta.get("val")
        x = node.args[0]
        if not isinstance(x, Node) or not isinstance(val, np.ndarray) or \
                val.dtype not in (np.float32, np.float64) or x.meta.get("val") is None or \
                getattr(x.meta["val"], "dtype", None) != val.dtype:
            continue
        erf = None
        for m in x.users:
            if _op_name(m) == "mul.Tensor" and m.args == (x, SQRT1_2) and not m.kwargs:
                erf = next((e for e in m.users if _op_name(e) == "erf" and not e.kwargs), None)
                if erf is not None:
                    break
        if erf is None:
            continue
        mul = erf.args[0]
        # both read only x, which comes before gelu: move them just before it
        graph.nodes.remove(mul)
        graph.nodes.remove(erf)
        at = graph.nodes.index(node)
        graph.nodes[at:at] = [mul, erf]
        x.users.pop(node, None)
        node.target = GELU_FROM_ERF
        node.args = (x, erf)
        x.users[node] = None
        erf.users[node] = None


def simplify(graph: Graph) -> None:
    share_gelu_erf(graph)
