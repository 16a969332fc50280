"""dtypes with torch's names and torch's type promotion.

NumPy's own promotion (NEP 50) differs from torch's in a few places that matter: an integer
tensor times a Python float is float32 in torch (float64 in NumPy), int32 + float16 is float16
in torch (float64 in NumPy), and a zero-dim float64 tensor does not upcast a float32 tensor.
So every op that mixes dtypes computes its result dtype here and casts before calling NumPy.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "float16", "half", "bfloat16", "float32", "float", "float64", "double",
    "float8_e4m3fn", "float8_e5m2", "int8", "int16", "short", "int32", "int", "int64", "long",
    "uint8", "uint16", "uint32", "uint64", "bool", "get_default_dtype", "set_default_dtype",
    "promote_types", "result_type", "can_cast", "finfo", "iinfo",
]

_BOOL, _INT, _FLOAT = 0, 1, 2


class dtype:
    """A tensor element type; wraps the NumPy dtype that stores it."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed", "abbr", "_legacy", "_rank")

    def __init__(self, name: str, np_dtype, category: _builtins.int, legacy: str,
                 rank: _builtins.int, abbr: str) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_signed = name not in ("uint8", "uint16", "uint32", "uint64", "bool")
        self.abbr = abbr
        self._legacy = legacy
        self._rank = rank

    @property
    def is_floating_point(self) -> _builtins.bool:
        return self.category == _FLOAT

    @property
    def is_complex(self) -> _builtins.bool:
        return False

    def to_real(self) -> dtype:
        return self

    def __repr__(self) -> str:
        return "retrograd." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name: str) -> dtype:
    return _NAMED[name]


bool = dtype("bool", np.bool_, _BOOL, "BoolTensor", 0, "b8")  # noqa: A001 - torch's name
uint8 = dtype("uint8", np.uint8, _INT, "ByteTensor", 1, "u8")
int8 = dtype("int8", np.int8, _INT, "CharTensor", 1, "i8")
int16 = dtype("int16", np.int16, _INT, "ShortTensor", 2, "i16")
int32 = dtype("int32", np.int32, _INT, "IntTensor", 3, "i32")
int64 = dtype("int64", np.int64, _INT, "LongTensor", 4, "i64")
# torch's "barebones" unsigned types: storage, conversion and a few kernels; torch refuses to
# promote them with any other dtype but a floating one (promote_types)
uint16 = dtype("uint16", np.uint16, _INT, "UInt16Tensor", 2, "u16")
uint32 = dtype("uint32", np.uint32, _INT, "UInt32Tensor", 3, "u32")
uint64 = dtype("uint64", np.uint64, _INT, "UInt64Tensor", 4, "u64")
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, _FLOAT, "Float8_e4m3fnTensor", 0,
                      "f8e4m3fn")
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, _FLOAT, "Float8_e5m2Tensor", 0,
                    "f8e5m2")
float16 = dtype("float16", np.float16, _FLOAT, "HalfTensor", 1, "f16")
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, "BFloat16Tensor", 1, "bf16")
float32 = dtype("float32", np.float32, _FLOAT, "FloatTensor", 2, "f32")
float64 = dtype("float64", np.float64, _FLOAT, "DoubleTensor", 3, "f64")

half = float16
float = float32  # noqa: A001
double = float64
short = int16
int = int32  # noqa: A001
long = int64

_ALL = (bool, uint8, int8, int16, int32, int64, uint16, uint32, uint64, float8_e4m3fn,
        float8_e5m2, float16, bfloat16, float32, float64)
_NAMED = {d.name: d for d in _ALL}
# NumPy dtype -> retrograd dtype; keyed by the np.dtype object (hashable, compares by value).
_FROM_NP = {d.np: d for d in _ALL}
_FLOAT8 = (float8_e4m3fn, float8_e5m2)
BAREBONES_UNSIGNED = (uint16, uint32, uint64)

_default_float = float32


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """torch.set_default_dtype: the dtype of Python floats in creation and promotion."""
    global _default_float
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


_NP_SUPPORTED = ("float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                 "uint64, uint32, uint16, uint8, and bool")


def unsupported_numpy_dtype(np_dtype) -> TypeError:
    return TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. "
                     f"The only supported types are: {_NP_SUPPORTED}.")


def from_numpy_dtype(np_dtype) -> dtype:
    """The retrograd dtype of a NumPy dtype."""
    try:
        return _FROM_NP[np_dtype]
    except (KeyError, TypeError):
        pass
    np_dtype = np.dtype(np_dtype)
    if np_dtype in _FROM_NP:
        return _FROM_NP[np_dtype]
    raise unsupported_numpy_dtype(np_dtype)


_LEGACY = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
           "int64": "Long", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
           "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
           "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


def legacy_name(d: dtype) -> str:
    """c10's ScalarType name ("Float", "Long", ...), used in torch's error messages."""
    return _LEGACY[d.name]


def promote_types(a: dtype, b: dtype) -> dtype:
    """torch.promote_types: the smallest dtype both a and b convert to without losing kind."""
    if a is b:
        return a
    if a in _FLOAT8 or b in _FLOAT8:
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to promote "
                           f"{legacy_name(a)} and {legacy_name(b)}")
    if a in BAREBONES_UNSIGNED or b in BAREBONES_UNSIGNED:
        if a.category == _FLOAT:
            return a
        if b.category == _FLOAT:
            return b
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {legacy_name(a)} and {legacy_name(b)}")
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == _INT:
        if a is uint8 or b is uint8:
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a._rank > b._rank else b
    if a._rank == b._rank:  # float16 with bfloat16
        return float32
    return a if a._rank > b._rank else b


def scalar_category(value) -> _builtins.int:
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

    Three tiers, as in torch: tensors with dims, zero-dim tensors, Python scalars (a float
    scalar counting as the default dtype). A lower tier only matters when it is of a higher
    category (bool < integer < float) than the tiers above it.
    """
    dim_t = zero_t = wrapped = None
    for op in operands:
        d = getattr(op, "dtype", None)
        if type(op) is np.ndarray:
            # an array operand counts as the tensor torch.as_tensor makes of it
            d = _FROM_NP.get(op.dtype)
        if isinstance(d, dtype):
            if op.ndim == 0:
                zero_t = d if zero_t is None else promote_types(zero_t, d)
            else:
                dim_t = d if dim_t is None else promote_types(dim_t, d)
        elif op is not None:
            w = scalar_dtype(op)
            wrapped = w if wrapped is None else promote_types(wrapped, w)
    return _combine_categories(dim_t, _combine_categories(zero_t, wrapped))


def _combine_categories(higher, lower):
    """c10's combine_categories: `higher` (a higher tier) wins unless `lower` brings a higher
    category; then the two are promoted together."""
    if higher is not None and higher.category == _FLOAT:
        return higher
    if higher is bool or (lower is not None and lower.category == _FLOAT):
        if higher is None or lower is None:
            return higher if lower is None else lower
        return promote_types(higher, lower)
    return higher if higher is not None else lower


def can_cast(from_: dtype, to: dtype) -> _builtins.bool:
    """torch.can_cast: same-kind casting (no float -> int, no int -> bool)."""
    return from_.category <= to.category


def scalar_dtype(value) -> dtype:
    """The dtype torch.tensor gives a Python scalar."""
    c = scalar_category(value)
    return bool if c == _BOOL else int64 if c == _INT else _default_float


class finfo:
    """torch.finfo: machine limits of a floating dtype (the default dtype when none is given)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002 - torch's name
        d = _default_float if type is None else type
        if not isinstance(d, dtype) or d.category != _FLOAT:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        info = ml_dtypes.finfo(d.np)
        self.bits = d.itemsize * 8
        self.eps = builtins_float(info.eps)
        self.max = builtins_float(info.max)
        self.min = builtins_float(info.min)
        self.tiny = self.smallest_normal = builtins_float(info.smallest_normal)
        # 10 ** -digits10, as C++'s numeric_limits gives it (NumPy's differs for small types)
        self.resolution = 10.0 ** -math.floor(info.nmant * math.log10(2))
        self.dtype = d.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")

    def __eq__(self, other) -> builtins_bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins_int:
        return hash(("finfo", self.dtype))


class iinfo:
    """torch.iinfo: the range of an integer dtype."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: dtype) -> None:  # noqa: A002 - torch's name
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, dtype) or type.category != _INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits = type.itemsize * 8
        self.max = builtins_int(info.max)
        self.min = builtins_int(info.min)
        self.dtype = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    def __eq__(self, other) -> builtins_bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins_int:
        return hash(("iinfo", self.dtype))


_LIMITS: dict = {}


def limits(d: dtype) -> tuple:
    """(lowest, max) of a dtype as Python numbers, cached (finfo / iinfo are slow to build)."""
    try:
        return _LIMITS[d]
    except KeyError:
        pass
    lim: tuple
    if d is bool:
        lim = (0, 1)
    elif d.category == _INT:
        ii = np.iinfo(d.np)
        lim = (builtins_int(ii.min), builtins_int(ii.max))
    else:
        fi = ml_dtypes.finfo(d.np)
        lim = (builtins_float(fi.min), builtins_float(fi.max))
    _LIMITS[d] = lim
    return lim


# dtype names as torch's messages spell them: C++ type names ("long int") and ScalarType names
# ("Long"), by retrograd dtype name
CPP_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "uint16": "short unsigned int", "uint32": "unsigned int",
    "uint64": "long unsigned int", "bool": "bool", "float8_e4m3fn": "c10::Float8_e4m3fn",
    "float8_e5m2": "c10::Float8_e5m2",
}
SCALAR_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64", "bool": "Bool",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
}
