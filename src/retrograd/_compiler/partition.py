"""Partition the joint graph into a forward graph and a backward graph (NOTE [Compiler
pipeline], stage 3).

The forward graph computes what the function returns (and the new values of inputs it writes);
every other node needed for the gradients goes to the backward graph, as eager autograd computes
it in backward. The values the backward reads from the forward side are the saved values: the
inputs and intermediates eager's formulas save, no more.
"""

from __future__ import annotations

from retrograd._compiler.graph import Graph, Node, map_nodes
from retrograd._compiler.helpers import GETITEM


def ancestors(targets: list) -> set:
    seen: set = set()
    stack = [t for t in targets if isinstance(t, Node)]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.inputs())
    return seen


def copy_into(graph: Graph, nodes: list, env: dict) -> None:
    """Copy `nodes` (in order) into `graph`, keeping their names; env maps old -> new."""
    for n in nodes:
        new = graph.call_function(n.target, map_nodes(n.args, env.__getitem__),
                                  {k: map_nodes(v, env.__getitem__) for k, v in n.kwargs.items()},
                                  val=n.meta.get("val"), name=n.name)
        new.meta.update({k: v for k, v in n.meta.items() if k != "val"})
        env[n] = new


class Partitioned:
    def __init__(self) -> None:
        self.forward = Graph()
        self.backward: Graph | None = None
        self.saved: list = []  # names of saved values, in forward output order
        self.backward_free: list = []  # names of read-only tensors the backward reads directly


def partition(joint: Graph, primals: list, tangents: list, n_fw_outputs: int) -> Partitioned:
    """`primals`: placeholder nodes in calling order; the joint output holds n_fw_outputs
    forward values (function outputs and written inputs' values), then gradients."""
    outs = list(joint.output_node.args[0])
    fw_outs, grads = outs[:n_fw_outputs], outs[n_fw_outputs:]
    # forward draws stay in the forward, in their order, even when only the backward reads
    # them (NOTE [Random draws in compiled graphs])
    fw_draws = [n for n in joint.nodes if n.meta.get("random") == "forward"]
    fw_set = ancestors(fw_outs + fw_draws) | set(primals)
    # a multi-output op's outputs are taken apart in the forward: a tuple is never saved
    for n in joint.nodes:
        if n.target is GETITEM and n.args[0] in fw_set:
            fw_set.add(n)
    body = [n for n in joint.nodes if n.op == "call_function"]
    result = Partitioned()
    fw = result.forward
    env: dict = {}
    for p in primals:
        env[p] = fw.placeholder(p.name, p.meta["val"], p.target)
    copy_into(fw, [n for n in body if n in fw_set], env)
    if not tangents:
        fw.output(tuple(map_nodes(o, env.__getitem__) for o in fw_outs))
        return result
    bw_set = ancestors(grads) - fw_set
    saved: list = []
    free: list = []  # tensors read from outside: the backward gets them from the call itself
    for n in joint.nodes:
        if n in bw_set:
            for i in n.inputs():
                if i.target == "free" and not i.meta.get("requires_grad"):
                    if i not in free:
                        free.append(i)
                elif i in fw_set and i not in saved:
                    saved.append(i)
    for g in grads:  # a gradient that is a forward value itself
        if isinstance(g, Node) and g in fw_set and g not in saved and g not in free:
            saved.append(g)
    fw.output(tuple([map_nodes(o, env.__getitem__) for o in fw_outs] + [env[s] for s in saved]))
    bw = result.backward = Graph()
    benv: dict = {}
    for s in saved:
        benv[s] = bw.placeholder(s.name, s.meta["val"], "saved")
    for t in tangents:
        benv[t] = bw.placeholder(t.name, t.meta["val"], "tangents")
    for f in free:
        benv[f] = bw.placeholder(f.name, f.meta["val"], "free")
    copy_into(bw, [n for n in body if n in bw_set], benv)
    bw.output(tuple(map_nodes(g, benv.__getitem__) for g in grads))
    result.saved = [s.name for s in saved]
    result.backward_free = [f.name for f in free]
    return result
