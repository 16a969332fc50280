"""make_tensor: random test tensors (torch.testing.make_tensor's arguments and checks), torch's
values under the same seed (its randint and uniform_ draws)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.kernels import torch_sampling as TS
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
    if d.category == D._INT:  # clamped to what the dtype holds (randint's int64 bound)
        info = np.iinfo(d.np)
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max) + (d is not D.int64))
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
    # torch's draws (NOTE [torch's random streams]): randint, or uniform_ in float32 for the
    # float8 types; a non-contiguous tensor is every second value of twice as many
    noncontiguous = noncontiguous and math.prod(size) > 1
    drawn = size[:-1] + (2 * size[-1],) if noncontiguous else size
    n = math.prod(drawn)
    g = gen(None)
    if dtype is D.bool:
        arr = TS.integers(g, n, 0, 2).astype(np.bool_).reshape(drawn)
    else:
        lo, hi = _bounds(dtype, low, high)
        if dtype.category == D._INT:
            arr = TS.integers(g, n, math.ceil(lo), math.ceil(hi)).astype(dtype.np)
        else:
            work = D.float32 if np.dtype(dtype.np).itemsize == 1 else dtype
            if hi - lo >= float(D.finfo(work).max):  # uniform_'s range limit: halve, double
                arr = TS.uniform(g, n, work.np, lo / 2, hi / 2) * 2
            else:
                arr = TS.uniform(g, n, work.np, lo, hi)
            arr = arr.astype(dtype.np, copy=False)
        arr = arr.reshape(drawn)
    if noncontiguous:
        arr = arr[..., 1::2]  # (offset by one, as torch's)
    elif memory_format is not None:
        from retrograd._memory_format import as_format, copy_as

        arr = copy_as(arr, as_format(memory_format))
    if exclude_zero:
        # zeros become the smallest positive value (1, or True, for integers and bools), as in
        # torch
        fill = float(D.finfo(dtype).tiny) if dtype.category == D._FLOAT else 1
        arr[arr == 0] = np.asarray(fill).astype(dtype.np)
    t = _wrap(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t

