"""UninitializedParameter and UninitializedBuffer: the state of a lazy module before its first call.

Such a tensor has a dtype and requires_grad but no shape yet: its array is an empty
placeholder. `materialize(shape)` gives it real (uninitialized) memory of that shape and turns
the object itself into a Parameter (or a plain Tensor), so whoever holds it, an optimizer built
early for instance, holds the real parameter afterwards.

Until then using it is an error, as in torch. The class defines __torch_dispatch__, so every op
that receives one is handed to it (NOTE [Wrapper subclasses]): it lets through only the dtype
conversions and copies torch allows and refuses the rest with torch's ValueError. The
Python-level Tensor methods that read the array without an op (numel, dim, ...) are refused
here directly. While any uninitialized tensor is alive the subclass dispatcher is on the mode
stack; materializing (or dropping) the last one takes it off again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd._ops import subclass as _subclass
from retrograd._ops.torch_function import disabled_torch_function_impl
from retrograd._tensor import Tensor, _init, _wrap

__all__ = ["UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer",
           "is_lazy"]

_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually "
          "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
          "initialized one. Call `forward` to initialize the parameters before accessing their "
          "attributes.")
_SHARE = ("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
          "initialize the parameters before calling `module.share_memory()`.")

# the ops torch lets through: dtype/device conversions and copies (aten names)
_ALLOWED_OPS = frozenset({"_to_copy", "to", "copy_", "_has_compatible_shallow_copy_type"})

# Tensor methods that read the placeholder array without going through an op
_REFUSED_METHODS = ("numel", "nelement", "dim", "ndimension", "stride", "storage_offset",
                    "is_contiguous", "element_size", "data_ptr", "untyped_storage", "item",
                    "tolist", "numpy", "__len__", "__iter__", "__bool__", "__float__",
                    "__int__", "__index__", "__complex__", "__array__")


def _use_error(cls: type, func: Any) -> ValueError:
    return ValueError(
        f"Attempted to use an uninitialized parameter in {func}. This error happens when you "
        "are using a `LazyModule` or explicitly manipulating "
        f"`torch.nn.parameter.{cls.__name__}` objects. When using LazyModules Call `forward` "
        "with a dummy batch to initialize the parameters before calling torch functions")


def _refusing(name: str) -> Any:
    target = getattr(Tensor, name)

    def refused(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise _use_error(type(self), target)

    refused.__name__ = name
    return refused


def _release() -> None:
    """One uninitialized tensor fewer: the dispatcher leaves with the last one."""
    try:
        _subclass._released()
    except Exception:  # noqa: BLE001 - at interpreter exit the module may be gone already
        pass


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share."""

    __module__ = "retrograd.nn.parameter"
    __slots__ = ()
    cls_to_become: type
    _counts_itself = True  # the live count drops in materialize/__del__, not in a finalizer
    __torch_function__ = disabled_torch_function_impl  # its dispatcher refuses what it must

    def _start(self: Any, requires_grad: bool, device: Any, dtype: Any) -> None:
        _subclass._track(self)  # first: __del__ releases it even if the checks below raise
        if device is not None:
            from retrograd._device import device as check_device

            check_device(device)  # only the CPU exists
        np_dtype = (dtype if dtype is not None else D.get_default_dtype()).np
        _init(self, np.empty((0,), np_dtype))
        if requires_grad:
            self.requires_grad_(True)

    def materialize(self: Any, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor memory of `shape` (uninitialized values), keeping its dtype unless
        `dtype` is given, and make it a regular Parameter (or Tensor)."""
        from retrograd._ops.creation import empty

        if device is not None:
            from retrograd._device import device as check_device

            check_device(device)
        self.data = empty(shape, dtype=dtype if dtype is not None else self.dtype)
        _release()
        self.__class__ = self.cls_to_become

    def __del__(self) -> None:
        # runs only while still uninitialized: the class it becomes has no __del__
        _release()

    @property
    def shape(self) -> Any:
        raise RuntimeError(_SHAPE)

    def share_memory_(self) -> Any:
        raise RuntimeError(_SHARE)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __reduce_ex__(self: Any, protocol: Any) -> Any:
        # as torch: a fresh one that requires grad as this one does (default dtype)
        return (type(self), (self._requires_grad,))

    def __deepcopy__(self: Any, memo: dict) -> Any:
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(self._requires_grad, None, self.dtype)
        memo[id(self)] = out
        return out

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: tuple = (),
                           kwargs: Any = None) -> Any:
        name = getattr(func, "__name__", "").split(".")[0]
        if name not in _ALLOWED_OPS:
            raise _use_error(cls, func)
        # the conversion runs on plain tensors over the same (empty) arrays
        plain = tuple(_wrap(a._data) if isinstance(a, Tensor) and is_lazy(a) else a
                      for a in args)
        out = func(*plain, **(kwargs or {}))
        if name == "copy_":
            return args[0]
        return cls._converted(out)

    @classmethod
    def _converted(cls, out: Any) -> Any:
        return out


for _name in _REFUSED_METHODS:
    setattr(UninitializedTensorMixin, _name, _refusing(_name))


def is_lazy(param: Any) -> bool:
    """Whether `param` is an UninitializedParameter or an UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


def _parameter_class() -> type:
    from retrograd.nn.parameter import Parameter

    return Parameter


class UninitializedParameter(UninitializedTensorMixin, _parameter_class()):  # type: ignore[misc]
    """A Parameter whose shape is not known yet (a lazy module's, before its first call).

    Only its dtype can be changed (`.to`, `.double()`, ...) and it can be copied; other uses
    raise. `materialize(shape)` makes it a regular Parameter."""

    __module__ = "retrograd.nn.parameter"  # where it is exported (and pickled from)
    cls_to_become = _parameter_class()

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        self._start(requires_grad, device, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):  # type: ignore[misc]
    """A buffer whose shape is not known yet (a lazy module's, before its first call).

    Assigned to a Module attribute it registers a buffer (persistent unless told otherwise);
    `materialize(shape)` makes it a plain Tensor."""

    __module__ = "retrograd.nn.parameter"
    __slots__ = ()  # Tensor's own layout, so that the object can become a Tensor
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        from retrograd.nn.parameter import mark_buffer

        self._start(requires_grad, device, dtype)
        mark_buffer(self, persistent)

    @property
    def persistent(self) -> bool:
        from retrograd.nn.parameter import _buffer_mark

        mark = _buffer_mark(self)
        if mark is None:  # a dtype conversion's result: no longer marked, as in torch
            raise AttributeError("'UninitializedBuffer' object has no attribute 'persistent'")
        return mark[1]

    @classmethod
    def _converted(cls, out: Any) -> Any:
        # a conversion of an uninitialized buffer stays one (torch's subclass conversion)
        if not isinstance(out, Tensor) or isinstance(out, UninitializedTensorMixin):
            return out
        new = object.__new__(cls)
        _init(new, out._data)
        new._requires_grad = out._requires_grad
        _subclass._track(new)
        return new
