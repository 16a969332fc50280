"""dtypes with torch's names and torch's type promotion.

NumPy's own promotion (NEP 50) differs from torch's in a few places that matter: an integer
tensor times a Python float is float32 in torch (float64 in NumPy), int32 + float16 is float16
in torch (float64 in NumPy), and a zero-dim float64 tensor does not upcast a float32 tensor.
So every op that mixes dtypes computes its result dtype here and casts before calling NumPy.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "float16", "half", "bfloat16", "float32", "float", "float64", "double",
    "float8_e4m3fn", "float8_e5m2", "int8", "int16", "short", "int32", "int", "int64", "long",
    "uint8", "bool", "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
    "can_cast",
]

_BOOL, _INT, _FLOAT = 0, 1, 2


class dtype:
    """A tensor element type; wraps the NumPy dtype that stores it."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed", "_legacy", "_rank")

    def __init__(self, name: str, np_dtype, category: int, legacy: str, rank: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_signed = name not in ("uint8", "bool")
        self._legacy = legacy
        self._rank = rank

    @property
    def is_floating_point(self) -> bool:
        return self.category == _FLOAT

    @property
    def is_complex(self) -> bool:
        return False

    def to_real(self) -> dtype:
        return self

    def __repr__(self) -> str:
        return "retrograd." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name: str) -> dtype:
    return _NAMED[name]


bool = dtype("bool", np.bool_, _BOOL, "BoolTensor", 0)  # noqa: A001 - torch's name
uint8 = dtype("uint8", np.uint8, _INT, "ByteTensor", 1)
int8 = dtype("int8", np.int8, _INT, "CharTensor", 1)
int16 = dtype("int16", np.int16, _INT, "ShortTensor", 2)
int32 = dtype("int32", np.int32, _INT, "IntTensor", 3)
int64 = dtype("int64", np.int64, _INT, "LongTensor", 4)
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, _FLOAT, "Float8_e4m3fnTensor", 0)
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, _FLOAT, "Float8_e5m2Tensor", 0)
float16 = dtype("float16", np.float16, _FLOAT, "HalfTensor", 1)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, "BFloat16Tensor", 1)
float32 = dtype("float32", np.float32, _FLOAT, "FloatTensor", 2)
float64 = dtype("float64", np.float64, _FLOAT, "DoubleTensor", 3)

half = float16
float = float32  # noqa: A001
double = float64
short = int16
int = int32  # noqa: A001
long = int64

_ALL = (bool, uint8, int8, int16, int32, int64, float8_e4m3fn, float8_e5m2, float16, bfloat16,
        float32, float64)
_NAMED = {d.name: d for d in _ALL}
# NumPy dtype -> retrograd dtype; keyed by the np.dtype object (hashable, compares by value).
_FROM_NP = {d.np: d for d in _ALL}
_FLOAT8 = (float8_e4m3fn, float8_e5m2)

_default_float = float32


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    global _default_float
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def from_numpy_dtype(np_dtype) -> dtype:
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        pass
    np_dtype = np.dtype(np_dtype)
    if np_dtype in _FROM_NP:
        return _FROM_NP[np_dtype]
    if np_dtype.kind == "u":  # torch has no wide unsigned types for general use
        return int64
    raise TypeError(
        f"can't convert np.ndarray of type {np_dtype}. The only supported types are: "
        "float64, float32, float16, bfloat16, float8, int64, int32, int16, int8, uint8, and bool."
    )


def promote_types(a: dtype, b: dtype) -> dtype:
    """torch.promote_types: the smallest dtype both a and b convert to without losing kind."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == _INT:
        if a is uint8 or b is uint8:
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a._rank > b._rank else b
    if a in _FLOAT8 or b in _FLOAT8:
        raise TypeError(f"Promotion for Float8 Types is not supported, attempted to promote "
                        f"{_legacy_name(a)} and {_legacy_name(b)}")
    if a._rank == b._rank:  # float16 with bfloat16
        return float32
    return a if a._rank > b._rank else b


def _legacy_name(d: dtype) -> str:
    return {"float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2", "bfloat16": "BFloat16",
            "float16": "Half", "float32": "Float", "float64": "Double"}.get(d.name, d.name)


def scalar_category(value) -> int:
    t = type(value)
    if t is builtins_bool or isinstance(value, (np.bool_,)):
        return _BOOL
    if t is builtins_int or isinstance(value, np.integer):
        return _INT
    return _FLOAT


import builtins as _builtins  # noqa: E402

builtins_bool = _builtins.bool
builtins_int = _builtins.int
builtins_float = _builtins.float


def result_type(*operands) -> dtype:
    """torch.result_type over tensors and Python scalars.

    Three tiers, as in torch: tensors with dims decide, unless a zero-dim tensor or a scalar is of
    a higher category (bool < integer < float), in which case that tier decides the category.
    """
    dim_t = zero_t = None
    wrapped = -1
    for op in operands:
        d = getattr(op, "dtype", None)
        if isinstance(d, dtype):
            if op.dim() == 0:
                zero_t = d if zero_t is None else promote_types(zero_t, d)
            else:
                dim_t = d if dim_t is None else promote_types(dim_t, d)
        elif op is not None:
            c = scalar_category(op)
            wrapped = c if c > wrapped else wrapped
    return _combine(dim_t, zero_t, wrapped)


def _combine(dim_t, zero_t, wrapped: int) -> dtype:
    result = dim_t
    if zero_t is not None and (result is None or zero_t.category > result.category):
        result = zero_t
    if wrapped >= 0 and (result is None or wrapped > result.category):
        if wrapped == _FLOAT:
            result = _default_float
        elif wrapped == _INT:
            result = int64
        else:
            result = bool
    return result


def can_cast(from_: dtype, to: dtype) -> bool:
    """torch.can_cast: same-kind casting (no float -> int, no int -> bool)."""
    return from_.category <= to.category


def scalar_dtype(value) -> dtype:
    """The dtype torch.tensor gives a Python scalar."""
    c = scalar_category(value)
    return bool if c == _BOOL else int64 if c == _INT else _default_float
