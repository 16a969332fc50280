"""The active transforms of this thread, and moving values into and out of a vmap level.

A vmap pushes a VmapLevel (its number, batch size and randomness); grad, vjp and jvp push a
marker so that a transform nested inside them keeps its results differentiable (create_graph).
Levels number upwards from 1; a BatchedTensor remembers the level that made it
(NOTE [Batched tensors]).
"""

from __future__ import annotations

import gc
import threading
from typing import Any

from retrograd._ops import forward_ad
from retrograd._ops import torch_function as _torch_function
from retrograd._tensor import Tensor


class VmapLevel:
    __slots__ = ("level", "batch_size", "randomness")

    def __init__(self, level: int, batch_size: int, randomness: str) -> None:
        self.level = level
        self.batch_size = batch_size
        self.randomness = randomness


class _Stack(threading.local):
    def __init__(self) -> None:
        self.transforms: list = []  # VmapLevel or the string "grad" / "jvp", innermost last
        self.next_level = 1


_stack = _Stack()


def push_vmap(batch_size: int, randomness: str) -> VmapLevel:
    lv = VmapLevel(_stack.next_level, batch_size, randomness)
    _stack.next_level += 1
    _stack.transforms.append(lv)
    return lv


def push(kind: str) -> None:
    _stack.transforms.append(kind)


def pop() -> None:
    _stack.transforms.pop()
    _stack.next_level = 1 + max((t.level for t in _stack.transforms
                                 if isinstance(t, VmapLevel)), default=0)


def collect_lingering() -> None:
    """After the outermost transform has returned (its frames, and the batched values they
    held, gone): batched values still alive are only in reference cycles (forward over
    reverse: a node keeps its output with its tangent, the output keeps the node). While any
    is alive the wrapper dispatcher stays on every op's path, so collect them now."""
    if not _stack.transforms:
        from retrograd._functorch.batched import live

        if live[0]:
            gc.collect(1)  # the young generations: the cycles were made just now (cheap)


def inside_autodiff() -> bool:
    """Whether a grad/vjp/jvp transform encloses the current point (its results must stay
    differentiable for it)."""
    return any(isinstance(t, str) for t in _stack.transforms)


def innermost_vmap() -> VmapLevel | None:
    for t in reversed(_stack.transforms):
        if isinstance(t, VmapLevel):
            return t
    return None


def vmap_levels() -> list:
    """The active vmap levels, outermost first."""
    return [t for t in _stack.transforms if isinstance(t, VmapLevel)]


def vmap_level(level: int) -> VmapLevel | None:
    for t in _stack.transforms:
        if isinstance(t, VmapLevel) and t.level == level:
            return t
    return None


def differentiated(t: Tensor) -> bool:
    """Whether reverse or forward mode differentiates t (moving it between levels must then
    be recorded)."""
    if t._requires_grad:
        return True
    return bool(forward_ad.levels) and forward_ad.tangent_of(t) is not None


def add_batch_dim(x: Tensor, in_dim: int, level: int) -> Any:
    """x as a BatchedTensor of `level` batched over its dimension in_dim; differentiable, so
    a transform outside the vmap sees through it."""
    if x.__class__ is not Tensor and _torch_function.takes_part(x.__class__):
        # as torch's batching, which sees no __torch_function__: the batched value is a plain
        # tensor (an alias that keeps the history), and so are the results
        x = x.as_subclass(Tensor)
    if differentiated(x):
        return _bridge.AddBatchDim.apply(x, in_dim, level)
    return _batched.BatchedTensor(x if in_dim == 0 else x.movedim(in_dim, 0), level)


def remove_batch_dim(y: Any, level: int, batch_size: int, out_dim: int) -> Tensor:
    """The value of y at `level` as a plain tensor (or a tensor of a lower level) with the batch
    dimension at out_dim; an output that does not depend on the batch is expanded."""
    if isinstance(y, _batched.BatchedTensor) and y._level == level:
        if differentiated(y):
            return _bridge.RemoveBatchDim.apply(y, out_dim)
        v = y._value
        return v if out_dim == 0 else v.movedim(0, out_dim)
    out = y.unsqueeze(0).expand(batch_size, *y.shape)
    return out if out_dim == 0 else out.movedim(0, out_dim)


# bound last: these modules import this one, and their names are read only when called
from retrograd._functorch import autograd_bridge as _bridge  # noqa: E402
from retrograd._functorch import batched as _batched  # noqa: E402
