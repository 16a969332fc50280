"""torch's legacy constructors: Tensor(2, 3), Tensor([1., 2.]), FloatTensor(...), t.new(...).

`Tensor(*sizes)` is an uninitialised tensor of the default dtype, `Tensor(sequence)` copies data
(a tuple is data; only a Size is a shape), `Tensor(tensor)` aliases its memory, `Tensor(storage)`
views a storage. FloatTensor, LongTensor, ... are instances of `tensortype`: calling one
constructs a Tensor of its dtype, and isinstance(t, FloatTensor) asks for a float32 tensor, as
in torch (where they are not subclasses of Tensor either).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd._autograd import op_seam
from retrograd._tensor import Size, Tensor, _init, _wrap


def _int_like(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _c_name(d: D.dtype) -> str:
    return op_seam.c_name(d)


def _options(d: D.dtype) -> str:
    return (f"TensorOptions(dtype={_c_name(d)}, device=cpu, layout=Strided, requires_grad=false "
            f"(default), pinned_memory=false (default), memory_format=(nullopt))")


def _shape(args: tuple) -> tuple:
    for i, a in enumerate(args):
        if not _int_like(a):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} "
                            f"with error \"type must be tuple of ints,but got "
                            f"{type(a).__name__}\"")
    shape = tuple(operator.index(a) for a in args)
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    return shape


def legacy_array(args: tuple, d: D.dtype | None) -> tuple[np.ndarray, Any]:
    """The array a legacy constructor builds from its arguments, and the storage it lives in
    when built over one (else None). d is None for Tensor itself: the default dtype, but a
    tensor argument keeps its own."""
    from retrograd.storage import TypedStorage, UntypedStorage

    if d is None and not (len(args) == 1 and isinstance(args[0], Tensor)):
        d = D.get_default_dtype()
    if not args:
        return np.empty(0, d.np), None
    first = args[0]
    if len(args) == 1:
        if isinstance(first, Tensor):
            if d is not None and first._data.dtype != d.np:
                raise TypeError(f"expected {_options(d)} (got {_options(first.dtype)})")
            return first._data, None
        if isinstance(first, (UntypedStorage, TypedStorage)):
            from retrograd.storage import array_on

            s = first.untyped()
            return array_on(s, d.np, 0, (s.nbytes() // d.itemsize,), (1,)), s
        if isinstance(first, Size):
            return np.empty(_shape(tuple(first)), d.np), None
        if not _int_like(first):
            return op_seam.to_numpy_array(first, d), None
    return np.empty(_shape(args), d.np), None


def construct(t: Tensor, args: tuple, d: D.dtype | None) -> None:
    """Tensor.__init__'s body for the legacy forms."""
    arr, storage = legacy_array(args, d)
    _init(t, arr)
    if storage is not None:
        t._get_meta().storage = storage


class tensortype(type):
    """The type of FloatTensor, LongTensor, ...: legacy per-dtype tensor constructors."""

    dtype: D.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        return Tensor(*args, dtype=cls.dtype, device=device)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj._data.dtype == cls.dtype.np


def _tensortype(d: D.dtype) -> tensortype:
    return tensortype(d._legacy, (), {"dtype": d, "is_cuda": False, "is_sparse": False,
                                      "__module__": "retrograd"})


FloatTensor = _tensortype(D.float32)
DoubleTensor = _tensortype(D.float64)
HalfTensor = _tensortype(D.float16)
BFloat16Tensor = _tensortype(D.bfloat16)
ByteTensor = _tensortype(D.uint8)
CharTensor = _tensortype(D.int8)
ShortTensor = _tensortype(D.int16)
IntTensor = _tensortype(D.int32)
LongTensor = _tensortype(D.int64)
BoolTensor = _tensortype(D.bool)


def new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """Tensor.new: a legacy constructor with self's dtype."""
    t = _wrap(np.empty(0, self._data.dtype))
    construct(t, args, self.dtype)
    return t

