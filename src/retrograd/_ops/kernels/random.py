"""NumPy kernels of random sampling: uniform and normal draws in torch's dtypes, range and
parameter checks with torch's messages. retrograd._ops.random declares the ops. No Tensor here:
plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._ops.kernels import torch_sampling as TS
from retrograd._ops.layout import not_implemented

_DIGITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8, "float8_e4m3fn": 4,
           "float8_e5m2": 3}

_C_NAMES = D.CPP_NAMES  # the C++ type names torch's range checks print


def uniform01(g: TS.TorchStream, shape: tuple, d: D.dtype) -> np.ndarray:
    """Uniform [0, 1) samples of dtype d, torch's (NOTE [torch's random streams])."""
    n = int(np.prod(shape, dtype=np.int64))
    return TS.uniform(g, n, d.np, 0.0, 1.0).reshape(shape)


def standard_normal(g: TS.TorchStream, shape: tuple, d: D.dtype) -> np.ndarray:
    """Standard normal samples of dtype d, in a new (contiguous) array, torch's."""
    return normal_samples(g, shape, d, 0.0, 1.0)


def normal_samples(g: TS.TorchStream, shape: tuple, d: D.dtype, mean: float, std: float,
                   contiguous: bool = True) -> np.ndarray:
    """normal_(mean, std)'s samples of dtype d in the order torch writes them (NOTE [torch's
    random streams]); the narrow floats computed in float32."""
    n = int(np.prod(shape, dtype=np.int64))
    return TS.normal(g, n, d.np, mean, std, contiguous).reshape(shape)


def _np_float(d: D.dtype):
    """The NumPy type to compute samples of dtype d in (float32 for the narrow floats)."""
    return np.float64 if d is D.float64 else np.float32


def _float_dtype_of(a: np.ndarray, kernel: str) -> D.dtype:
    d = D.from_numpy_dtype(a.dtype)
    if d.category != D._FLOAT:
        raise not_implemented(kernel, d.np)
    return d


def _check_range(low: int, high: int, d: D.dtype) -> None:
    """random_(from, to)'s checks: from < to, both within the dtype (with a precision warning
    for floats beyond the integers they represent exactly)."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    cname = _C_NAMES[d.name]
    lo, hi = D.limits(d)
    if low < lo:
        raise RuntimeError(f"from is out of bounds for {cname}")
    if high - 1 > hi:
        raise RuntimeError(f"to - 1 is out of bounds for {cname}")
    if d.category == D._FLOAT:
        digits = _DIGITS[d.name]
        for label, v in (("from", low), ("to - 1", high - 1)):
            if not -(2**digits) <= v <= 2**digits:
                _ws.warn(
                    f"{label} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {cname} can support discrete uniform distribution only within "
                    "this range. This warning will become an error in version 1.7 release, "
                    "please fix the code in advance", UserWarning, stacklevel=4)


def _integers(g: TS.TorchStream, low: int, high: int, shape: tuple, d: D.dtype
              ) -> np.ndarray:
    """random_(low, high)'s integers, torch's, converted to dtype d."""
    n = int(np.prod(shape, dtype=np.int64))
    return TS.integers(g, n, low, high).reshape(shape).astype(d.np)


def _check_std(std: float) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _check_uniform(low: float, high: float, d: D.dtype) -> None:
    cname = _C_NAMES[d.name]
    fmax = D.limits(d)[1]
    if not -fmax <= low <= fmax:
        raise RuntimeError(f"from is out of bounds for {cname}")
    if not -fmax <= high <= fmax:
        raise RuntimeError(f"to is out of bounds for {cname}")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={low:g} > to={high:g}")
    if high - low > fmax:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{D.legacy_name(d)}>::max(), but found to={high:g} and from={low:g} "
                           "which result in to-from to exceed the limit")


_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_p_tensor(p: np.ndarray) -> None:
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError(_P_RANGE)


def _check_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")


def _expand_to(p: np.ndarray, shape: tuple) -> np.ndarray:
    """p broadcast to `shape`, with torch's expand error."""
    if len(p.shape) <= len(shape):
        lead = len(shape) - len(p.shape)
        for i, n in enumerate(p.shape):
            if n != 1 and n != shape[lead + i]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({shape[lead + i]}) must match the "
                    f"existing size ({n}) at non-singleton dimension {lead + i}.  Target sizes: "
                    f"{list(shape)}.  Tensor sizes: {list(p.shape)}")
        return np.broadcast_to(p, shape)
    raise RuntimeError(f"expand(torch.FloatTensor{{{list(p.shape)}}}, size={list(shape)}): the "
                       "number of sizes provided must be greater or equal to the number of "
                       "dimensions in the tensor")


def _full_range(d: D.dtype) -> tuple:
    """random_()'s range: the dtype's non-negative integers; floats up to 2**mantissa digits."""
    if d is D.bool:
        return 0, 2
    if d.category == D._INT:
        return 0, D.limits(d)[1] + 1
    return 0, 2 ** _DIGITS[d.name] + 1


def _continuous(a, name: str) -> D.dtype:
    d = D.from_numpy_dtype(a.dtype)
    if d.category != D._FLOAT:
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {_C_NAMES[d.name]}"
                           if name == "Cauchy" else
                           f"{name} distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {D.legacy_name(d)}")
    return d
