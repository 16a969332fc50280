"""broadcast_shapes, broadcast_tensors, broadcast_to: torch's broadcasting helpers, as expands."""

from __future__ import annotations

from typing import Any

from retrograd import _errors as E
from retrograd._ops.registry import register
from retrograd._tensor import Size, Tensor


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape all arguments broadcast to (ints count as 1-d shapes)."""
    result: list = []
    for i, shape in enumerate(shapes):
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        if len(dims) > len(result):
            result = [1] * (len(dims) - len(result)) + result
        for k in range(1, len(dims) + 1):
            n, have = dims[-k], result[-k]
            if n == have or n == 1:
                continue
            if have != 1:
                raise RuntimeError(E.BROADCAST_SHAPES.format(n, -k, i, shape, result))
            result[-k] = n
    return Size(result)


def broadcast_tensors(*tensors: Tensor) -> tuple:
    """Each tensor expanded (a view) to the common shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if len(tensors) == 1:
        return (tensors[0],)
    shape = tuple(tensors[0].shape)
    for t in tensors[1:]:
        shape = _pair_shape(shape, tuple(t.shape))
    # a tensor already of the common shape comes back as itself, as in torch
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def _pair_shape(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(E.BROADCAST.format(x, y, i))
        out.append(y if x == 1 else x)
    return tuple(out)


def broadcast_to(input: Tensor, size: Any) -> Tensor:
    """input expanded to `size` (a view; torch's grad_fn is ExpandBackward0)."""
    return input.expand(tuple(size))


def is_floating_point(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise TypeError(E.IS_FLOATING_POINT_NOT_TENSOR.format(type(input).__name__))
    return input.dtype.is_floating_point


register("broadcast_shapes", broadcast_shapes)
register("broadcast_tensors", broadcast_tensors)
register("broadcast_to", broadcast_to, method=True)
register("is_floating_point", is_floating_point)


def is_complex(input: Tensor) -> bool:
    """torch.is_complex: retrograd has no complex dtypes, so False for every tensor."""
    if not isinstance(input, Tensor):
        raise TypeError("is_complex(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_complex()


def detach(input: Tensor) -> Tensor:
    """torch.detach: input.detach()."""
    if not isinstance(input, Tensor):
        raise TypeError("detach(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.detach()


register("is_complex", is_complex)
register("detach", detach)
