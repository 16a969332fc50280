"""torch.gradient: derivatives estimated by finite differences, second order inside and first
or second order at the two ends, with uniform spacing (a number per dim) or sample coordinates
(a 1-D tensor per dim). Written on the ops as torch's composite, so each result is a cat
(CatBackward0) of the start, the interior and the end."""

from __future__ import annotations

import numbers
from typing import Any

from retrograd._dims import wrap_dim
from retrograd._numpy_names import numpy_names
from retrograd._ops.kernels.pointwise import SUB_BOOLS
from retrograd._ops.registry import register
from retrograd._tensor import Tensor

EDGE_ORDER = "torch.gradient only supports edge_order=1 and edge_order=2."
TOO_SHORT = "torch.gradient expected each dimension size to be at least edge_order+1"


def _ns() -> Any:
    import retrograd

    return retrograd


def _dims(input: Tensor, dim: Any) -> list:
    if dim is None:
        return list(range(input.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    wrapped = [wrap_dim(d, input.dim()) for d in dims]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return wrapped


def _spacings(input: Tensor, spacing: Any, dims: list, dim_given: bool) -> list:
    if isinstance(spacing, (numbers.Number, Tensor)) and not (
            isinstance(spacing, Tensor) and spacing.dim() > 0):
        return [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        if dim_given:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {len(dims)}.")
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to 'self.dim() = {input.dim()}', since dim "
                           f"argument was not given, but got a list of length {len(spacing)}")
    return spacing


def _part(t: Tensor, d: int, start: int, stop: int | None) -> Tensor:
    n = t.shape[d]
    lo = start if start >= 0 else n + start
    hi = n if stop is None else (stop if stop >= 0 else n + stop)
    return t.narrow(d, lo, hi - lo)


def _uniform(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    center = (_part(f, d, 2, None) - _part(f, d, 0, -2)) / h
    if edge_order == 1:
        first = (_part(f, d, 1, 2) - _part(f, d, 0, 1)) / h
        last = (_part(f, d, -1, None) - _part(f, d, -2, -1)) / h
    else:
        first = (-1.5 * _part(f, d, 0, 1) + 2 * _part(f, d, 1, 2)
                 - 0.5 * _part(f, d, 2, 3)) / h
        last = (0.5 * _part(f, d, -3, -2) - 2 * _part(f, d, -2, -1)
                + 1.5 * _part(f, d, -1, None)) / h
    return _ns().cat([first, center / 2, last], d)


def _coordinates(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    ns = _ns()
    if not x.dtype.is_floating_point:
        x = x.to(ns.get_default_dtype())
    step = x.diff(1, 0)
    left, right = step[:-1], step[1:]
    shape = [1] * f.dim()
    shape[d] = -1
    # the three-point weights for unequal neighbours (second order inside)
    a = (-right / (left * (left + right))).reshape(shape)
    b = ((right - left) / (left * right)).reshape(shape)
    c = (left / (right * (left + right))).reshape(shape)
    center = a * _part(f, d, 0, -2) + b * _part(f, d, 1, -1) + c * _part(f, d, 2, None)
    if edge_order == 1:
        first = (_part(f, d, 1, 2) - _part(f, d, 0, 1)) / step[0]
        last = (_part(f, d, -1, None) - _part(f, d, -2, -1)) / step[-1]
    else:
        h0, h1 = step[0], step[1]
        first = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * _part(f, d, 0, 1)
                 + (h0 + h1) / (h0 * h1) * _part(f, d, 1, 2)
                 + (-h0) / (h1 * (h0 + h1)) * _part(f, d, 2, 3))
        g1, g0 = step[-1], step[-2]
        last = (g1 / (g0 * (g1 + g0)) * _part(f, d, -3, -2)
                - (g1 + g0) / (g1 * g0) * _part(f, d, -2, -1)
                + (2 * g1 + g0) / (g1 * (g1 + g0)) * _part(f, d, -1, None))
    return ns.cat([first, center, last], d)


@numpy_names
def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,
             edge_order: int = 1) -> tuple:
    """One tensor per dim in `dim` (all dims by default): the estimated derivative of input
    along it."""
    if input.dtype is _ns().uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if input.dtype is _ns().bool:  # torch's differences of two bool tensors
        raise RuntimeError(SUB_BOOLS)
    if edge_order not in (1, 2):
        raise RuntimeError(EDGE_ORDER)
    dims = _dims(input, dim)
    spacings = _spacings(input, spacing, dims, dim is not None)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(TOO_SHORT)
    f = input
    if not (f.dtype.is_floating_point or f.dtype.is_complex):
        f = f.to(_ns().get_default_dtype())
    out = []
    for d, h in zip(dims, spacings):
        if isinstance(h, Tensor) and h.dim() == 1:
            out.append(_coordinates(f, d, h, edge_order))
        else:
            out.append(_uniform(f, d, h.item() if isinstance(h, Tensor) else h, edge_order))
    return tuple(out)


register("gradient", gradient)
