"""torch's legacy typed storage classes (FloatStorage, LongStorage, ...) and
Tensor.storage_type().

As in torch, a class builds a TypedStorage of its dtype (it is never an instance of its own
class) and `isinstance(s, FloatStorage)` asks whether a TypedStorage holds float32."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd.storage import TypedStorage, UntypedStorage, warn_typed_storage

_SIGNATURES = ("{cls}.__new__ received an invalid combination of arguments. Expected one of:\n"
               " * no arguments\n * (int size)\n * (Sequence data)\n"
               " * (*, UntypedStorage wrap_storage)\n{why}")


class _LegacyStorageMeta(type):
    dtype: D.dtype  # each class's

    def __instancecheck__(cls, instance: Any) -> bool:
        return type(instance) is TypedStorage and instance.dtype == cls.dtype


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """A storage class of one dtype; calling it builds a TypedStorage of that dtype."""

    dtype: D.dtype  # type: ignore[misc]  # (a class attribute here, the slot in TypedStorage)

    def __new__(cls, *args: Any, wrap_storage: Any = None, **kwargs: Any) -> Any:  # type: ignore[misc]
        def refuse(error: type, why: str) -> Exception:
            return error(_SIGNATURES.format(cls=cls, why=why))

        if "device" in kwargs:
            raise refuse(RuntimeError, "Keyword argument 'device' cannot be specified")
        if kwargs:
            raise refuse(RuntimeError, f"Keyword argument '{next(iter(kwargs))}' was not "
                         "expected")
        warn_typed_storage(3)
        if wrap_storage is not None:
            if args:
                raise refuse(RuntimeError, "No positional arguments should be given when using "
                             "'wrap_storage'")
            if not isinstance(wrap_storage, UntypedStorage):
                raise refuse(TypeError, "Argument 'wrap_storage' must be UntypedStorage, but "
                             f"got {type(wrap_storage)}")
            return TypedStorage(wrap_storage, cls.dtype)
        if len(args) > 1:
            raise refuse(RuntimeError, "Too many positional arguments")
        if not args:
            values = np.zeros(0, cls.dtype.np)
        elif isinstance(args[0], int) and not isinstance(args[0], bool):
            if args[0] < 0:
                raise RuntimeError(f"Storage size must be non-negative, got {args[0]}")
            values = np.zeros(args[0], cls.dtype.np)
        elif isinstance(args[0], Sequence) and not isinstance(args[0], str):
            values = _values(list(args[0]), cls.dtype)
        else:
            raise refuse(TypeError, f"Argument type not recognized: {type(args[0])}")
        return TypedStorage(UntypedStorage._over(values.view(np.uint8)), cls.dtype)

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # (a TypedStorage, made above)
        pass


def _values(data: list, dtype: D.dtype) -> np.ndarray:
    """The sequence's numbers in `dtype`, converted and checked as torch.tensor(data, dtype)
    converts them (torch builds a legacy storage from such a tensor)."""
    for v in data:
        if isinstance(v, str) or not isinstance(v, (int, float, bool, np.number, np.bool_)):
            raise TypeError(f"must be real number, not {type(v).__name__}")
    from retrograd._ops.kernels.creation import _from_python

    return np.ascontiguousarray(_from_python(data, dtype)).reshape(-1)


def _storage_class(name: str, dtype: D.dtype) -> _LegacyStorageMeta:
    cls = _LegacyStorageMeta(name, (_LegacyStorage,), {"dtype": dtype, "__module__": "retrograd",
                                                       "__qualname__": name})
    return cls


LEGACY_STORAGES = {name: _storage_class(name, dtype) for name, dtype in (
    ("BFloat16Storage", D.bfloat16), ("BoolStorage", D.bool), ("ByteStorage", D.uint8),
    ("CharStorage", D.int8), ("DoubleStorage", D.float64), ("FloatStorage", D.float32),
    ("HalfStorage", D.float16), ("IntStorage", D.int32), ("LongStorage", D.int64),
    ("ShortStorage", D.int16))}
BY_DTYPE = {cls.dtype: cls for cls in LEGACY_STORAGES.values()}
Storage = _storage_class("Storage", D.float32)  # torch.Storage: float32's, by another name


def storage_type(t: Any) -> type:
    """Tensor.storage_type(): the legacy storage class of the tensor's dtype."""
    return BY_DTYPE[t.dtype]
