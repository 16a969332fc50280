"""Flatten parameters into one vector and back."""

from __future__ import annotations

from collections.abc import Iterable

import retrograd
from retrograd._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters, flattened and concatenated (differentiable)."""
    return retrograd.cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Make each parameter's data the next slice of vec (sharing vec's memory, as torch)."""
    if not isinstance(vec, Tensor):
        from retrograd.nn.modules.module import _typename

        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
