"""The one helper of PyTorch's op database that the autograd tests import."""

import torch


def mask_not_all_zeros(shape):
    """A random boolean mask of `shape` with at least one True element."""
    while True:
        result = torch.randn(shape).gt(0)
        if result.sum() > 0:
            return result
