"""Random draws in compiled graphs.

NOTE [Random draws in compiled graphs]
Dropout's noise, the random factories (rand, randn, randint, randperm, normal(mean, std, size)),
the *_like draws (rand_like, randn_like, randint_like: laid out as empty_like lays out the input)
and multinomial draw from the generator (torch's draws) in a kernel called through
retrograd._ops.random.draw, which reports each draw to the thread's dispatch modes (a tensor
argument, multinomial's probabilities, becomes the graph value it holds; the kernel checks the
values, so a compiled call raises eager's error). The compiler's tracer records it as one graph node
whose target calls the same kernel with the same arguments, so the generated forward draws again at
every call, from the same generator, in the order eager draws (nodes run in capture order; partition
keeps forward draws in the forward, and unused draws are not erased, as eager still makes them).
Under one seed a compiled function and its eager run draw the same numbers; the backward reads the
noise the forward drew (saved like any forward value), never a new draw. Only draws from the default
generator are recorded: a Generator object the function uses may be made or reseeded inside it,
which the graph would not repeat. The random ops declared as ops (bernoulli, normal, uniform_, ...)
are recorded as ops and draw at run time the same way.
"""

from __future__ import annotations

from typing import Any

from retrograd._compiler.graph import Node
from retrograd._compiler.helpers import GETITEM, Helper

_HELPERS: dict = {}


def helper_for(kernel: Any) -> Helper:
    """The graph target that calls `kernel` (one per kernel, named after it)."""
    h = _HELPERS.get(kernel)
    if h is None:
        name = kernel.__name__.lstrip("_")
        h = _HELPERS[kernel] = Helper(f"retrograd.random.{name}", kernel, f"_random_{name}")
    return h


def is_random(node: Node) -> bool:
    return bool(node.meta.get("random"))


def record(tracer: Any, kernel: Any, args: tuple, out: Any) -> None:
    """Add the draw kernel(*args) -> out to the tracer's graph and bind its result(s). A draw
    from a Generator object is left out: the function may make or reseed it at each call,
    which the graph does not see (the check against eager then runs the function eagerly)."""
    from retrograd._ops.random import Generator

    if any(isinstance(a, Generator) for a in args):
        return
    node_args = tuple(tracer._arg_node(a) for a in args)
    node = tracer.graph.call_function(helper_for(kernel), node_args, val=out)
    node.meta["random"] = "backward" if tracer.backward_phase else "forward"
    if isinstance(out, tuple):
        for i, o in enumerate(out):
            item = tracer.graph.call_function(GETITEM, (node, i), val=o, name=f"{node.name}_{i}")
            tracer.bind(o, item)
    else:
        tracer.bind(out, node)
