"""The public graph API: Node, GradientEdge, get_gradient_edge, saved-tensor hooks, ..."""

from __future__ import annotations

from typing import NamedTuple

from retrograd._autograd.node import Node
from retrograd._tensor import Tensor

__all__ = ["Node", "GradientEdge", "get_gradient_edge"]


class GradientEdge(NamedTuple):
    """An edge of the graph: the gradient flowing into `node` at input `output_nr`."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients")
    from retrograd._autograd.accumulate_grad import gradient_edge

    return GradientEdge(*gradient_edge(tensor))


class saved_tensors_hooks:
    """Context manager: pack_hook(tensor) runs when an op saves a tensor for backward, and
    unpack_hook(packed) when backward needs it back. The innermost pair applies (PyTorch's
    rule); with compose=True the pair is combined with the enclosing one instead (see NOTE
    [Composed hooks] in retrograd._autograd.saved_hooks)."""

    def __init__(self, pack_hook, unpack_hook, compose: bool = False) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self.compose = compose

    def __enter__(self) -> saved_tensors_hooks:
        from retrograd._autograd.saved_hooks import push_hooks

        push_hooks(self.pack_hook, self.unpack_hook, self.compose)
        return self

    def __exit__(self, *exc) -> None:
        from retrograd._autograd.saved_hooks import pop_hooks

        pop_hooks()
