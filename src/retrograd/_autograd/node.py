"""Node: one step of the backward graph.

A node computes gradients of a forward op's inputs from gradients of its outputs. Its edges,
`next_functions`, are `(node, input_nr)` pairs in the order of the forward op's differentiable
inputs, `(None, 0)` where an input needs no gradient. `_output_meta` holds (shape, dtype) of each
forward output, so the engine can check incoming gradients and materialize zeros.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from retrograd._autograd.hooks import NodeHooks, RemovableHandle, add_hook
from retrograd._fields import FieldTable

_sequence = itertools.count()
next_sequence_nr = _sequence.__next__

# AccumulateGrad nodes run as soon as they are ready (PyTorch gives them UINT64_MAX).
MAX_SEQUENCE_NR = 2**64 - 1

# The `needed` argument of an op node's generated backward: which inputs need a gradient is
# read from the running graph task (backward/grad with `inputs=`).
FROM_TASK = object()


class Node:
    __slots__ = ("next_functions", "_seq", "_output_meta", "_hooks", "_metadata", "_anomaly",
                 "__weakref__")
    # AccumulateGrad reads its tensor pre-hooks from the leaf at run time
    _lazy_tensor_hooks = False
    # True on op nodes, whose backward is the op's formulas on the values in `_saved`: they
    # take `needed` in apply() and refuse a saved input detached in place since (as PyTorch's
    # op nodes do); a custom Function's node computes what its backward computes
    _op_formulas = False
    # True on nodes that may keep their incoming gradient's memory (AccumulateGrad) or pass it
    # on (view ops, add, clone): the engine tells them whether it is its own (NOTE [Gradient
    # ownership]); others make new memory, so it does not look
    _reads_ownership = False

    if TYPE_CHECKING:
        def __init__(self, next_functions: tuple = (), output_meta: tuple = ()) -> None:
            ...  # made from NODE_FIELDS below

    # --- what the engine calls -------------------------------------------------------------
    def apply(self, grad_outputs: list) -> tuple:
        """Gradients for each edge in next_functions, from gradients of each forward output."""
        raise NotImplementedError

    def release_variables(self) -> None:
        """Free saved tensors after backward (unless retain_graph)."""

    def _run(self, grads: list, release: bool, needed: Any, graph: bool) -> tuple:
        """The engine's one call into a node: apply(), then the saved values freed if `release`.
        `needed` says which edges need a gradient; `graph` is create_graph (without it a node
        may compute on arrays). Op nodes run their generated backward instead (NOTE [Fast
        backward] in retrograd._ops.registry)."""
        outputs = self.apply(grads)
        if release:
            self.release_variables()
        return outputs

    # --- public API ---------------------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__


    def _sequence_nr(self) -> int:
        return self._seq

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _get_hooks(self) -> NodeHooks:
        if self._hooks is None:
            self._hooks = NodeHooks()
        return self._hooks

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """fn(grad_inputs, grad_outputs) after the node runs; may return new grad_inputs."""
        return add_hook(self._get_hooks().post, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """fn(grad_outputs) before the node runs; may return new grad_outputs."""
        return add_hook(self._get_hooks().pre, fn)

    def _register_tensor_prehook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        return add_hook(self._get_hooks().tensor_pre, (output_nr, fn))

    def __call__(self, *grad_outputs: Any) -> Any:
        n = len(self._output_meta)
        if len(grad_outputs) != n:
            raise TypeError(f"expected {n} arguments, got {len(grad_outputs)} instead")
        out = self.apply(list(grad_outputs))
        return out[0] if len(out) == 1 else tuple(out)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


# NOTE [Field tables]: a fresh Node, as Node.__init__, the generic runner and the op entry
# points make it (op nodes extend it: registry.FORMULA_NODE_FIELDS)
NODE_FIELDS = FieldTable(Node, "_Node", (
    ("next_functions", "{next_functions}",
     "edges (node, input_nr), one per differentiable input of the forward op"),
    ("_seq", "_next()", "creation order: among ready nodes the engine runs the latest first"),
    ("_output_meta", "{output_meta}",
     "(shape, dtype) of each forward output: incoming gradients are checked and zero-filled"),
    ("_hooks", "None", "NodeHooks, made when the first hook is registered"),
    ("_metadata", "None", "the metadata dict, made on first use"),
    ("_anomaly", "None", "the forward trace, recorded under anomaly mode"),
), ("next_functions", "output_meta"), {"_next": next_sequence_nr})
Node.__init__ = NODE_FIELDS.constructor(  # type: ignore[method-assign]
    "__init__", "self, next_functions=(), output_meta=()", target="self",
    qualname="Node.__init__")


class CppNode(Node):
    """Nodes PyTorch writes by hand in C++; their name() carries the C++ namespace there."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::" + type(self).__name__


class GraphRoot(CppNode):
    """Feeds the initial gradients of backward()/grad() to the outputs' nodes."""

    __slots__ = ("_grads",)

    def __init__(self, edges: tuple, grads: list) -> None:
        super().__init__(edges)
        self._grads = grads

    def apply(self, grad_outputs: list) -> tuple:
        return tuple(self._grads)


class Identity(CppNode):
    """A pass-through node (used where a graph needs a single join point)."""

    __slots__ = ()

    def apply(self, grad_outputs: list) -> tuple:
        return tuple(grad_outputs)


class Error(CppNode):
    """Raises when backward reaches it (e.g. through a once_differentiable function)."""

    __slots__ = ("_msg",)

    def __init__(self, msg: str, next_functions: tuple = (), output_meta: tuple = ()) -> None:
        super().__init__(next_functions, output_meta)
        self._msg = msg

    def apply(self, grad_outputs: list) -> tuple:
        raise RuntimeError(self._msg)
