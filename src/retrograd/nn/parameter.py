"""Parameter and Buffer: the tensors a Module registers as its state.

A Parameter is a Tensor subclass (with a __dict__, unlike Tensor, so that code may tag it with
attributes as it can in torch). Made from a tensor, it shares that tensor's memory and version
counter, like `detach()`, but is a leaf that requires grad by default.

`Buffer(t)` returns a plain detached Tensor, as torch does, marked so that assigning it to a
Module attribute registers a buffer; `isinstance(x, Buffer)` reads that mark.

UninitializedParameter and UninitializedBuffer (the state of lazy modules before their first
call) are in nn/_uninitialized.py.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from retrograd._ops.torch_function import disabled_torch_function_impl
from retrograd._tensor import Tensor, _init

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer", "UninitializedBuffer",
           "UninitializedTensorMixin"]

# torch's wording here differs from Tensor.requires_grad_'s
PARAM_DTYPE = "Only Tensors of floating point and complex dtype can require gradients"


class Parameter(Tensor):
    """A Tensor that a Module registers as a parameter when assigned as an attribute."""

    # ops on a Parameter give plain tensors, as torch's (NOTE [Torch function])
    __torch_function__ = disabled_torch_function_impl

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            from retrograd._dtype import get_default_dtype

            arr = np.empty((0,), get_default_dtype().np)
            _init(self, arr)
        else:
            if not isinstance(data, Tensor):
                # torch 2.13 fails on data.detach()
                raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
            _init(self, data._data)
            self._version_counter = data._version_counter  # shares memory as a detached alias
        if requires_grad:
            if not self.is_floating_point():
                raise RuntimeError(PARAM_DTYPE)
            self._requires_grad = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: int):
        state = OrderedDict(self.__dict__)
        return (_rebuild_parameter, (np.array(self._data), self._requires_grad, state))


def _rebuild_parameter(arr: np.ndarray, requires_grad: bool, state: dict) -> Parameter:
    from retrograd._tensor import _wrap

    p = Parameter(_wrap(arr), requires_grad)
    p.__dict__.update(state)
    return p


# id(tensor) -> (weakref to it, persistent): tensors made by Buffer(); Tensor has no __dict__
_BUFFER_MARKS: dict[int, tuple[weakref.ref, bool]] = {}


def _forget(key: int) -> None:
    _BUFFER_MARKS.pop(key, None)


def _buffer_mark(obj: Any) -> tuple[weakref.ref, bool] | None:
    mark = _BUFFER_MARKS.get(id(obj))
    if mark is None or mark[0]() is not obj:
        return None
    return mark


class _BufferMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return _buffer_mark(obj) is not None


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a buffer: `module.x = Buffer(t)` registers `x` as a buffer."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:
        from retrograd._ops.creation import empty

        t = empty(0) if data is None else data.detach()
        mark_buffer(t, persistent)
        return t


def mark_buffer(t: Tensor, persistent: bool) -> None:
    """Mark `t` as made by Buffer(): assigning it to a Module attribute registers a buffer."""
    key = id(t)
    _BUFFER_MARKS[key] = (weakref.ref(t, lambda _r, k=key: _forget(k)), bool(persistent))


def buffer_persistent(obj: Any) -> bool:
    """The `persistent` flag a Buffer() was made with."""
    mark = _buffer_mark(obj)
    return True if mark is None else mark[1]


# the uninitialized parameters and buffers of lazy modules live in their own file
from retrograd.nn._uninitialized import (  # noqa: E402
    UninitializedBuffer,
    UninitializedParameter,
    UninitializedTensorMixin,
    is_lazy,
)
