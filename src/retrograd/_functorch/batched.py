"""BatchedTensor: a value batched over one vmap level (NOTE [Batched tensors])."""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd._ops import subclass
from retrograd._ops.torch_function import disabled_torch_function_impl
from retrograd._tensor import Tensor

ITEM_IN_VMAP = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
    ".item() on a Tensor, please try to rewrite what you're doing with other operations. If "
    "error is occurring somewhere inside PyTorch internals, please file a bug report.")
CONTROL_FLOW_IN_VMAP = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
    "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/"
    "issues .")

_geometry: dict = {}  # (shape, dtype) -> a read-only zero array standing for the geometry


def _geometry_array(shape: tuple, dtype: np.dtype) -> np.ndarray:
    key = (shape, dtype)
    arr = _geometry.get(key)
    if arr is None:
        arr = np.zeros(shape, dtype)
        arr.flags.writeable = False
        if len(_geometry) < 4096:
            _geometry[key] = arr
    return arr


live = [0]  # batched values alive (all gone once the outermost transform returns, but cycles)


class BatchedTensor(Tensor):
    """The per-example view of `_value` (batch dimension first) at vmap level `_level`."""

    _value: Tensor
    _level: int
    _counts_itself = True  # __del__ releases it (NOTE [Wrapper subclasses]'s count)
    __torch_function__ = disabled_torch_function_impl  # its ops are its dispatcher's alone
    _wraps_wrappers = True  # a batched value of a batched value (nested vmap) dispatches again
    # what an in-place view op (transpose_, unsqueeze_, ...) moves from the view it made into
    # the tensor itself, beside the geometry (NOTE [In-place view ops])
    _view_state = ("_value",)

    def __new__(cls, value: Tensor, level: int) -> BatchedTensor:
        t: Any = object.__new__(cls)
        data = value._data
        geometry = _geometry.get((data.shape[1:], data.dtype))
        t._data = geometry if geometry is not None else \
            _geometry_array(data.shape[1:], data.dtype)
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        t._grad = None
        vc = t._version_counter = object.__new__(subclass.VersionCounter)
        vc.version = 0
        t._view = None
        t._grad_acc = None
        t._meta = None
        t._value = value
        t._level = level
        subclass.counted()  # (_counts_itself: __del__ releases it)
        live[0] += 1
        return t

    def __del__(self) -> None:
        live[0] -= 1
        subclass._released()

    def __init__(self, value: Tensor, level: int) -> None:
        pass

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        return _batch_rules.apply_rule(func, args, kwargs or {})

    @staticmethod
    def __lift_args__(args: tuple) -> tuple:
        """Plain inputs that require grad, met by batched ones, become batched copies whose
        gradient sums over the batch (NOTE [Batched tensors])."""
        _batch_size = _batch_rules._batch_size
        level = _batch_rules._level_of(args)
        size = -1
        out = list(args)
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                if a._requires_grad and not is_batched(a, level):
                    if size < 0:
                        size = _batch_size(args, level)
                    out[i] = broadcast(a, level, size)
            elif isinstance(a, (list, tuple)) and any(
                    isinstance(t, Tensor) and t._requires_grad and not is_batched(t, level)
                    for t in a):
                if size < 0:
                    size = _batch_size(args, level)
                out[i] = type(a)(broadcast(t, level, size) if isinstance(t, Tensor)
                                 and t._requires_grad and not is_batched(t, level) else t
                                 for t in a)
        return tuple(out)

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{self._value!r}\n)"

    # the new_* factories of a batched value make batched values, as torch's do: a backward
    # that writes a batched gradient into gO.new_zeros(...) must be able to hold it
    def new_zeros(self, *size: Any, **kwargs: Any) -> Tensor:  # type: ignore[override]
        return self._new_batched("new_zeros", size, kwargs)

    def new_ones(self, *size: Any, **kwargs: Any) -> Tensor:  # type: ignore[override]
        return self._new_batched("new_ones", size, kwargs)

    def new_empty(self, *size: Any, **kwargs: Any) -> Tensor:  # type: ignore[override]
        return self._new_batched("new_empty", size, kwargs)

    def new_full(self, size: Any, fill_value: Any, **kwargs: Any  # type: ignore[override]
                 ) -> Tensor:
        return self._new_batched("new_full", (size,), kwargs, fill_value)

    def _new_batched(self, name: str, size: tuple, kwargs: dict, *extra: Any) -> Tensor:
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        value = self._value
        made = getattr(value, name)((value.shape[0], *size), *extra, **kwargs)
        return BatchedTensor(made, self._level)

    # data-dependent reads have no single answer for a batch
    def item(self) -> Any:
        raise RuntimeError(ITEM_IN_VMAP)

    def __bool__(self) -> bool:
        raise RuntimeError(CONTROL_FLOW_IN_VMAP)

    def __float__(self) -> float:
        raise RuntimeError(ITEM_IN_VMAP)

    def __int__(self) -> int:
        raise RuntimeError(ITEM_IN_VMAP)

    def __index__(self) -> int:
        raise RuntimeError(ITEM_IN_VMAP)

    def tolist(self) -> Any:
        raise RuntimeError(ITEM_IN_VMAP)


def is_batched(t: Any, level: int) -> bool:
    return type(t) is BatchedTensor and t._level == level


def broadcast(t: Tensor, level: int, size: int) -> Tensor:
    """t, unbatched at `level`, as a batched value of `size` copies (differentiable)."""
    return _bridge.Broadcast.apply(t, level, size)


# bound last: both modules import this one, and their names are read only when ops run
from retrograd._functorch import autograd_bridge as _bridge  # noqa: E402
from retrograd._functorch import batch_rules as _batch_rules  # noqa: E402
