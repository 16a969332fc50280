"""Rewrites of the captured graph before partition (NOTE [Compiler pipeline], between stages 2
and 3). Each keeps every value bit for bit what eager computes.

Signed-zero terms: x + -0.0 is x for every float x (and x - 0.0 too), so such a node is
dropped and its readers read x.

gelu's erf: exact gelu computes erf(x / sqrt 2) inside its kernel, and its derivative computes
the same erf again in the backward (erf costs a dozen NumPy passes here). When the backward's
erf(x * SQRT1_2) is in the graph, it moves to the forward and gelu is computed from it with the
kernel's own arithmetic (x * 0.5 * (erf + 1)); the erf is then a saved value, computed once.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._compiler.graph import Graph, Node, map_nodes
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


def _is_signed_zero_term(node: Node) -> bool:
    """x + -0.0 or x - 0.0 with alpha 1, where x already has the result's dtype and shape:
    x itself, bit for bit (-0.0 included). Forward-mode AD adds these for an argument that
    carries no tangent (forward_ad.ABSENT_TERM)."""
    name = _op_name(node)
    if name not in ("add.Tensor", "sub.Tensor") or node.kwargs or len(node.args) not in (2, 3):
        return False
    x, term = node.args[0], node.args[1]
    if node.args[2:] not in ((), (1,)) or type(term) is not float or term != 0.0 or \
            (math.copysign(1.0, term) < 0) != (name == "add.Tensor"):
        return False
    val = node.meta.get("val")
    xval = x.meta.get("val") if isinstance(x, Node) else None
    return isinstance(val, np.ndarray) and isinstance(xval, np.ndarray) and \
        val.dtype.kind == "f" and xval.dtype == val.dtype and xval.shape == val.shape


def drop_signed_zero_terms(graph: Graph) -> None:
    """Each x + -0.0 (or x - 0.0) read as x. For an output, only where x is a value of its own
    that is no output: an output never shares its buffer with another output or an input."""
    outputs = set(graph.output_node.inputs())
    for node in list(graph.nodes):
        if not _is_signed_zero_term(node):
            continue
        x = node.args[0]
        if node in outputs:
            others = graph.placeholders() + [o for o in outputs if o is not node]
            if x in outputs or x.op != "call_function" or any(
                    isinstance(o.meta.get("val"), np.ndarray) and
                    np.may_share_memory(o.meta["val"], x.meta["val"]) for o in others):
                continue
            outputs.add(x)
        _read_instead(node, x)
        x.users.pop(node, None)
        graph.nodes.remove(node)


def _read_instead(node: Node, x: Node) -> None:
    """Every reader of `node` reads `x` in its place."""

    def swap(n: Node) -> Node:
        return x if n is node else n

    for user in list(node.users):
        user.args = map_nodes(user.args, swap)
        user.kwargs = {k: map_nodes(v, swap) for k, v in user.kwargs.items()}
        x.users[user] = None


def simplify(graph: Graph) -> None:
    drop_signed_zero_terms(graph)
    share_gelu_erf(graph)
