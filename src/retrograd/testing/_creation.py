"""make_tensor: random test tensors (torch.testing.make_tensor's arguments and checks), drawn
from the default generator with NumPy's algorithms (repeatable under a seed, not torch's
values)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd._tensor import Tensor, _wrap

_DEFAULT_RANGE = {D._FLOAT: (-9, 9), D._INT: (-9, 10)}


def _shape(shape: tuple) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        return tuple(shape[0])
    return tuple(shape)


def _bounds(d: D.dtype, low: float | None, high: float | None) -> tuple[float, float]:
    lo, hi = _DEFAULT_RANGE[d.category]
    lo = lo if low is None else low
    hi = hi if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
    if lo > hi or (lo == hi and d.category == D._INT):
        raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
    if d.category == D._INT:  # clamped to what the dtype holds
        info = np.iinfo(d.np)
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max) + 1)
    return lo, hi


def make_tensor(*shape: Any, dtype: D.dtype, device: Any, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A tensor of `shape` with values uniform in [low, high) (floats: [-9, 9] by default,
    integers: [-9, 10), unsigned from 0, bools random)."""
    from retrograd._device import device as Device
    from retrograd._ops.random import gen

    Device(device)  # only the CPU exists
    if requires_grad and dtype.category != D._FLOAT:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    size = _shape(shape)
    rng = gen(None)  # retrograd.manual_seed makes it repeatable
    if dtype is D.bool:
        arr = rng.integers(0, 2, size=size).astype(np.bool_)
    else:
        lo, hi = _bounds(dtype, low, high)
        if dtype.category == D._INT:
            arr = rng.integers(math.ceil(lo), math.ceil(hi), size=size).astype(dtype.np)
        else:
            arr = rng.uniform(lo, hi, size=size).astype(np.float64)
            arr = np.clip(arr, lo, hi).astype(dtype.np)
        if exclude_zero:
            # zeros become the smallest positive value (1 for integers), as in torch
            fill = 1 if dtype.category == D._INT else float(D.finfo(dtype).tiny)
            arr = np.where(arr == 0, np.asarray(fill).astype(dtype.np), arr).astype(dtype.np)
    if noncontiguous and arr.size > 1:
        wide = np.repeat(arr, 2, axis=-1)
        arr = wide[..., ::2]
    elif memory_format is not None:
        from retrograd._memory_format import as_format, copy_as

        arr = copy_as(arr, as_format(memory_format))
    t = _wrap(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t

