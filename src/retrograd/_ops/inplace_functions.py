"""torch's namespace forms of in-place Tensor methods (torch.clamp_(x, 0) is x.clamp_(0)):
each runs the method, so node names, version counters and in-place checks are the method's."""

from __future__ import annotations

from typing import Any

from retrograd._ops.registry import register
from retrograd._tensor import Tensor


def _tensor(name: str, input: Any) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input


def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _tensor("clamp_", input).clamp_(min, max)


def clip_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _tensor("clip_", input).clip_(min, max)


def clamp_min_(input: Tensor, min: Any) -> Tensor:
    return _tensor("clamp_min_", input).clamp_min_(min)


def clamp_max_(input: Tensor, max: Any) -> Tensor:
    return _tensor("clamp_max_", input).clamp_max_(max)


def round_(input: Tensor, *, decimals: int = 0) -> Tensor:
    t = _tensor("round_", input)
    return t.round_(decimals=decimals) if decimals else t.round_()


def square_(input: Tensor) -> Tensor:
    return _tensor("square_", input).square_()


def negative_(input: Tensor) -> Tensor:
    return _tensor("negative_", input).negative_()


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _tensor("addmv_", input).addmv_(mat, vec, beta=beta, alpha=alpha)


def detach_(input: Tensor) -> Tensor:
    return _tensor("detach_", input).detach_()


def as_strided_(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    return _tensor("as_strided_", input).as_strided_(size, stride, storage_offset)


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    return _tensor("resize_as_", input).resize_as_(the_template, memory_format=memory_format)


for _f in (clamp_, clip_, clamp_min_, clamp_max_, round_, square_, negative_, addmv_, detach_,
           as_strided_, resize_as_):
    register(_f.__name__, _f)
