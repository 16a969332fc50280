"""The graph's node classes by name, as torch._C._functions lists them: the hand-written ones
here, and every op's formula node (`MulBackward0`, ...) looked up in the op registry."""

from __future__ import annotations

from typing import Any

from retrograd._autograd.accumulate_grad import AccumulateGrad, gradient_edge
from retrograd._autograd.copy_slices import CopySlices
from retrograd._autograd.node import Error, GraphRoot, Identity
from retrograd._autograd.state import state
from retrograd._tensor import Tensor, _wrap


class DelayedError(Error):
    """DelayedError(msg, num_inputs)(*tensors): the tensors again (same memory and version),
    with a history whose node raises `msg` if backward reaches it."""

    __slots__ = ()

    def __init__(self, msg: str, num_inputs: int) -> None:
        super().__init__(msg)

    def __call__(self, *inputs: Tensor) -> Any:
        requires = state.grad_enabled and any(
            t is not None and t._requires_grad for t in inputs)
        node = None
        if requires:
            edges = tuple(gradient_edge(t) if t is not None and t._requires_grad else (None, 0)
                          for t in inputs)
            meta = tuple((t._data.shape, t._data.dtype) for t in inputs)
            node = Error(self._msg, edges, meta)
        outs = []
        for nr, t in enumerate(inputs):
            out = _wrap(t._data)
            out._version_counter = t._version_counter
            if node is not None:
                out._grad_fn, out._output_nr, out._requires_grad = node, nr, True
            outs.append(out)
        return outs[0] if len(outs) == 1 else tuple(outs)

__all__ = ["AccumulateGrad", "CopySlices", "DelayedError", "Error", "GraphRoot", "Identity"]


def __getattr__(name: str) -> Any:
    from retrograd._ops.registry import OPS

    for opdef in OPS.values():
        cls = opdef.node_cls
        if cls is not None and cls.__name__ == name:
            return cls
    raise AttributeError(f"module 'retrograd._C._functions' has no attribute '{name}'")
