"""Creating tensors: from data, filled, ranges, random (with retrograd's own generator)."""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.registry import register, register_method
from retrograd._tensor import Tensor, _wrap


def _infer_dtype(data) -> D.dtype:
    """torch.tensor's dtype for nested Python data: bool < int < float, floats -> default."""
    kind = 0
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            return x.dtype if kind < 2 or x.dtype.category == 2 else D.get_default_dtype()
        if isinstance(x, np.ndarray):
            return D.from_numpy_dtype(x.dtype)
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, (bool, np.bool_)):
            kind = max(kind, 0)
        elif isinstance(x, (int, np.integer)):
            kind = max(kind, 1)
        else:
            kind = 2
    return (D.bool, D.int64, D.get_default_dtype())[kind]


def _to_nested(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_to_nested(x) for x in data]
    return data


def to_numpy_array(data, dtype: D.dtype | None = None) -> np.ndarray:
    """A fresh array for retrograd.tensor(data, dtype)."""
    if isinstance(data, Tensor):
        arr = data._data
        target = dtype.np if dtype is not None else arr.dtype
        return np.array(arr, dtype=target, copy=True)
    if isinstance(data, np.ndarray):
        target = dtype.np if dtype is not None else D.from_numpy_dtype(data.dtype).np
        return np.array(data, dtype=target, copy=True)
    if isinstance(data, np.generic):
        target = dtype.np if dtype is not None else D.from_numpy_dtype(data.dtype).np
        return np.array(data, dtype=target)
    target = (dtype or _infer_dtype(data)).np
    nested = _to_nested(data)
    try:
        arr = np.array(nested, dtype=np.float64 if target.kind == "V" else None)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length lists: {e}") from None
    if arr.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    return arr.astype(target, copy=False)


def tensor(data, *, dtype: D.dtype | None = None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    out = _wrap(to_numpy_array(data, dtype))
    if requires_grad:
        out.requires_grad = True
    return out


def as_tensor(data, dtype: D.dtype | None = None, device=None) -> Tensor:
    """Shares memory with an ndarray or Tensor of the right dtype; copies otherwise."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, np.ndarray):
        if dtype is None or data.dtype == dtype.np:
            return from_numpy(data)
        return _wrap(data.astype(dtype.np))
    return tensor(data, dtype=dtype)


def from_numpy(arr: np.ndarray) -> Tensor:
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    D.from_numpy_dtype(arr.dtype)
    if any(s < 0 for s in arr.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making "
            "a copy of your array  with array.copy().) ")
    return _wrap(arr)


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"zeros(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    return tuple(int(s) for s in size)


def _finish(arr: np.ndarray, requires_grad: bool) -> Tensor:
    out = _wrap(arr)
    if requires_grad:
        out.requires_grad = True
    return out


def _dt(dtype: D.dtype | None) -> np.dtype:
    return (dtype or D.get_default_dtype()).np


def zeros(*size, dtype=None, device=None, requires_grad=False, layout=None, out=None) -> Tensor:
    return _finish(np.zeros(_size(size), _dt(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, layout=None, out=None) -> Tensor:
    return _finish(np.ones(_size(size), _dt(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
          pin_memory=False, out=None) -> Tensor:
    return _finish(np.empty(_size(size), _dt(dtype)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    if dtype is None:
        dtype = D.scalar_dtype(fill_value)
    return _finish(np.full(_size((size,)), fill_value, dtype.np), requires_grad)


def _like(fill, input: Tensor, dtype, requires_grad):
    arr = input._data
    target = arr.dtype if dtype is None else dtype.np
    from retrograd._autograd.accumulate_grad import empty_like_layout

    out = empty_like_layout(arr, target)
    out[...] = fill
    return _finish(out, requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=None) -> Tensor:
    return _like(0, input, dtype, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None) -> Tensor:
    return _like(1, input, dtype, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=None) -> Tensor:
    return _like(0, input, dtype, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None) -> Tensor:
    return _like(fill_value, input, dtype, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False,
           out=None) -> Tensor:
    if end is None:
        start, end = 0, start
    vals = [start, end, step]
    vals = [v.item() if isinstance(v, Tensor) else v for v in vals]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = D.int64 if all(isinstance(v, (int, np.integer)) for v in vals) \
            else D.get_default_dtype()
    n = int(np.ceil((end - start) / step))
    arr = (start + np.arange(n, dtype=np.float64) * step) if dtype.category == 2 else \
        np.arange(start, end, step, dtype=np.int64)
    return _finish(arr.astype(dtype.np), requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False,
             out=None) -> Tensor:
    arr = np.linspace(float(start), float(end), int(steps), dtype=np.float64)
    return _finish(arr.astype(_dt(dtype)), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    return _finish(np.eye(n, m if m is not None else n, dtype=_dt(dtype)), requires_grad)


def _new_maker(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        return fn(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    return method


register_method("new_zeros", _new_maker(zeros))
register_method("new_ones", _new_maker(ones))
register_method("new_empty", _new_maker(empty))


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


register_method("new_full", new_full)
register_method("new_tensor", new_tensor)

for _f in (tensor, as_tensor, from_numpy, zeros, ones, empty, full, zeros_like, ones_like,
           empty_like, full_like, arange, linspace, eye):
    register(_f.__name__, _f)


