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
