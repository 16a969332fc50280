"""The graph's node classes by name, as torch._C._functions lists them: the hand-written ones
here, and every op's formula node (`MulBackward0`, ...) looked up in the op registry."""

from __future__ import annotations

from typing import Any

from retrograd._autograd.accumulate_grad import AccumulateGrad
from retrograd._autograd.copy_slices import CopySlices
from retrograd._autograd.node import Error, GraphRoot, Identity

# torch's DelayedError (a node that raises when backward reaches it) is retrograd's Error
DelayedError = Error

__all__ = ["AccumulateGrad", "CopySlices", "DelayedError", "Error", "GraphRoot", "Identity"]


def __getattr__(name: str) -> Any:
    from retrograd._ops.registry import OPS

    for opdef in OPS.values():
        cls = opdef.node_cls
        if cls is not None and cls.__name__ == name:
            return cls
    raise AttributeError(f"module 'retrograd._C._functions' has no attribute '{name}'")
