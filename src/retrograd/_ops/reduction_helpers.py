"""Summing a gradient back to the shape of a broadcast input."""

from __future__ import annotations

from retrograd._tensor import Tensor


def sum_to(grad: Tensor, shape: tuple) -> Tensor:
    """Sum `grad` over the dims that broadcasting added or expanded, giving `shape`."""
    gshape = grad._data.shape
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    if lead:
        grad = grad.reshape(shape)
    return grad
