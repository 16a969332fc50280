"""NumPy kernels of the pointwise ops: forwards, argument checks, in-place writers and array
formulas (NOTE [Array formulas]) on plain arrays and Python numbers. No Tensor here: the op
declarations in retrograd._ops.pointwise wrap these.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.kernels.creation import check_fits, check_int_scalar
from retrograd._ops.layout import binary, not_implemented, promote_args, result_dtype

LN2 = math.log(2.0)


LN10 = math.log(10.0)


SQRT_PI = math.sqrt(math.pi)


SUB_BOOLS = "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` " \
    "or `logical_xor()` operator instead."


SUB_BOOL = "Subtraction, the `-` operator, with a bool tensor is not supported. If you are " \
    "trying to invert a mask, use the `~` or `logical_not()` operator instead."


NEG_BOOL = "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to " \
    "invert a mask, use the `~` or `logical_not()` operator instead."


POS_BOOL = "The `+` operator, on a bool tensor is not supported."


ALPHA_FLOAT = "For integral input tensors, argument alpha must not be a floating point number."


ALPHA_BOOL = "Boolean alpha only supported for Boolean results."


ZERO_DIV = "ZeroDivisionError"


ROUNDING_MODE = "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'"


NEG_INT_POW = "Integers to negative integer powers are not allowed."


ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
    "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
    "dtypes."
)


CLAMP_NONE = "torch.clamp: At least one of 'min' or 'max' must not be None"


LERP_DTYPE = "expected dtype {} for `{}` but got dtype {}"


WHERE_COND = "where expected condition to be a boolean tensor, but got a tensor with dtype {}"


def _int_like(x) -> bool:
    return x.dtype.kind in "iub" if type(x) is np.ndarray else not isinstance(x, float)


def _is_bool(x) -> bool:
    return x.dtype.kind == "b" if type(x) is np.ndarray else type(x) is bool


def _check_kind(a, kernel: str, kinds: str = "b") -> None:
    """torch's NotImplementedError for a dtype a kernel has no implementation for."""
    if type(a) is np.ndarray and a.dtype.kind in kinds:
        raise not_implemented(kernel, a.dtype)


_np_add, _np_sub, _np_mul, _np_div = (binary(np.add), binary(np.subtract), binary(np.multiply),
                                      binary(np.true_divide))


def _scaled(b, alpha, like):
    """b * alpha in b's dtype (alpha is a Python number; torch checks it against the dtype)."""
    kind = like.dtype.kind if type(like) is np.ndarray else "f"
    if type(alpha) is bool and kind != "b":
        raise RuntimeError(ALPHA_BOOL)
    if kind in "iub" and isinstance(alpha, float):
        raise RuntimeError(ALPHA_FLOAT)
    if type(b) is not np.ndarray:
        return bool(b and alpha) if kind == "b" else b * alpha
    if b.dtype.kind == "b":
        return np.logical_and(b, bool(alpha))
    if b.dtype.kind == "V":
        alpha = b.dtype.type(alpha)
    return np.multiply(b, alpha)


def _add(a, b, alpha):
    if alpha == 1 and alpha is not True:
        return _np_add(a, b)
    return _np_add(a, _scaled(b, alpha, a))


# the ufunc each computes when alpha is 1 (the dual fast path calls it directly)
_add.alpha_ufunc = np.add  # type: ignore[attr-defined]


def _check_sub(a, b) -> None:
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(SUB_BOOLS if _is_bool(a) and _is_bool(b) else SUB_BOOL)


def _sub(a, b, alpha):
    if alpha == 1 and alpha is not True:
        return _np_sub(a, b)
    return _np_sub(a, _scaled(b, alpha, a))


def _sub_forward(a, b, alpha):
    if alpha == 1 and a.dtype.kind == "f":
        c = b.__class__
        if c is float or c is int or (c is np.ndarray and a.dtype is b.dtype):
            return _np_sub(a, b)  # the common cases: nothing to check or promote
    _check_sub(a, b)
    return _sub(*promote_args((a, b), (0, 1)), alpha)


_sub_forward.alpha_ufunc = np.subtract  # type: ignore[attr-defined]


def _rsub(a, b, alpha):
    _check_sub(a, b)
    a, b = promote_args((a, b), (0, 1))
    return _sub(b, a, alpha)


def _check_int_zero(b) -> None:
    """Integer division by zero raises in torch (NumPy would return 0 with a warning)."""
    if type(b) is np.ndarray:
        if b.dtype.kind in "iub" and not b.all():
            raise RuntimeError(ZERO_DIV)
    elif not isinstance(b, float) and b == 0:
        raise RuntimeError(ZERO_DIV)


def _div_floor(a, b):
    if a.dtype.kind in "iub":
        _check_kind(a, "div_floor_cpu")
        _check_int_zero(b)
    return _np_floor_divide(a, b)


def _div_trunc(a, b):
    if a.dtype.kind not in "iub":
        return np.trunc(_np_div(a, b))
    _check_kind(a, "div_trunc_cpu")
    _check_int_zero(b)
    q = _np_floor_divide(a, b)
    # floor and trunc differ where the division is inexact and the signs differ
    fix = (np.remainder(a, b) != 0) & ((np.less(a, 0)) != (np.less(b, 0)))
    return q + fix.astype(q.dtype) if fix.any() else q


_np_floor_divide = binary(np.floor_divide)


def _check_mode(rounding_mode) -> None:
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(ROUNDING_MODE.format(rounding_mode))


def _div_mode(a, b, rounding_mode):
    _check_mode(rounding_mode)
    if rounding_mode is None:
        return _np_div(*promote_args((a, b), (0, 1), to_float=True))
    a, b = promote_args((a, b), (0, 1))
    if rounding_mode == "trunc":
        return _div_trunc(a, b)
    return _div_floor(a, b)


def _check_int_division(a, b, kernel: str) -> None:
    """Integer remainder / fmod: no bools, no division by zero (checked on promoted operands)."""
    arr = a if type(a) is np.ndarray else b
    if arr.dtype.kind in "iub":
        _check_kind(arr, kernel)
        _check_int_zero(b)


def _remainder(a, b):
    _check_int_division(a, b, "remainder_cpu")
    return _np_remainder(a, b)


def _fmod(a, b):
    _check_int_division(a, b, "fmod_cpu")
    return _np_fmod(a, b)


_np_remainder, _np_fmod = binary(np.remainder), binary(np.fmod)


def _int_pow(a, b):
    """Integer power with torch's rule for negative exponents: 1 and -1 stay, others go to 0."""
    neg = np.less(b, 0)
    if not np.any(neg):
        return np.power(a, b)
    safe = np.power(a, np.where(neg, 0, b))
    one = np.ones((), dtype=safe.dtype)
    odd = np.remainder(b, 2) != 0
    small = np.where(np.equal(a, 1), one, np.where(np.equal(a, -1),
                                                    np.where(odd, -one, one), 0 * one))
    return np.where(neg, small, safe).astype(safe.dtype, copy=False)


def _pow(a, b):
    if type(a) is np.ndarray and a.dtype.kind == "b" and _is_bool(b):
        raise not_implemented("pow", a.dtype)
    if type(b) is np.ndarray and b.dtype.kind == "b" and _is_bool(a):
        raise not_implemented("pow", b.dtype)
    dt = a.dtype if type(a) is np.ndarray else b.dtype
    if dt.kind in "iub":
        return _int_pow(a, b)
    return np.power(a, b)


def _pow_tensor_scalar(a, exponent):
    if a.dtype.kind in "iub" and not isinstance(exponent, float) and exponent < 0:
        raise RuntimeError(NEG_INT_POW)
    a, exponent = promote_args((a, exponent), (0, 1))
    if a.dtype.kind in "iub":
        if a.dtype.kind == "b":  # bool ** bool: x ** True is x, x ** False is all True
            return a.copy() if exponent else np.ones(a.shape, bool)
        return np.power(a, exponent)
    if exponent == 2:
        return np.square(a)
    if a.dtype.itemsize < 4:  # half types: float32 math, so the exponent is not rounded
        return np.power(a.astype(np.float32), float(exponent)).astype(a.dtype)
    return np.power(a, exponent)


def _log_scalar(x) -> float:
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _neg(a):
    if a.dtype.kind == "b":
        raise RuntimeError(NEG_BOOL)
    return np.negative(a)


def _abs(a):
    _check_kind(a, "abs_cpu")
    return np.abs(a)


def _sign(a):
    if a.dtype.kind in "fV":
        # torch's sign is (x > 0) - (x < 0): 0 for NaN, where NumPy gives NaN
        out = np.greater(a, 0).astype(a.dtype)
        out -= np.less(a, 0)
        return out
    return a.copy() if a.dtype.kind == "b" else np.sign(a)


def _rsqrt(a):
    r = np.sqrt(a)
    if type(r) is np.ndarray:
        return np.reciprocal(r, out=r)
    return np.reciprocal(r)


def _tanh_backward(g, y):
    out = np.multiply(y, y)
    if type(out) is not np.ndarray:  # 0-d operands give a NumPy scalar: nothing to write into
        return np.asarray(np.multiply(g, np.subtract(1, out)))
    np.subtract(1, out, out=out)
    return _times_into(g, out)


def _sigmoid(a):
    if a.dtype.itemsize <= 2 and a.dtype.kind in "fV":  # in float32, rounded once, as torch
        return _sigmoid(a.astype(np.float32)).astype(a.dtype)
    e = np.exp(np.negative(a))
    if type(e) is not np.ndarray:
        return np.asarray(1 / (1 + e), dtype=a.dtype)
    e += 1
    return np.reciprocal(e, out=e)


def _sigmoid_backward(g, y):
    out = np.subtract(1, y)
    if type(out) is not np.ndarray:  # 0-d operands give a NumPy scalar: nothing to write into
        return np.asarray(np.multiply(g, np.multiply(out, y)))
    np.multiply(out, y, out=out)
    return _times_into(g, out)


def _times_into(g, out):
    """g * out, written into out (a fresh array) unless g broadcasts it to a larger shape (the
    two operands broadcast, as torch's binary kernels do: vmap hands in such pairs). NumPy
    refuses that write before it starts, so trying costs the common case nothing."""
    try:
        return np.multiply(g, out, out=out)
    except ValueError:  # g broadcasts out to a larger shape
        return np.multiply(g, out)


def _erf_series(x: np.ndarray) -> np.ndarray:
    """erf in float64 without SciPy: a positive-term series for |x| < 3, erfc's continued
    fraction beyond (both accurate to about 1e-16)."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    small = ax < 3.0
    xs = np.where(small, x, 0.0)
    x2 = xs * xs
    term = xs.copy()
    total = xs.copy()
    for n in range(1, 120):
        term = term * (2.0 * x2 / (2 * n + 1))
        total += term
        if not np.any(np.abs(term) > 1e-17 * np.abs(total)):
            break
    series = 2.0 / SQRT_PI * np.exp(-x2) * total
    xl = np.where(small, 3.0, ax)
    frac = xl.copy()
    for k in range(60, 0, -1):
        frac = xl + (k / 2.0) / frac
    erfc = np.exp(-xl * xl) / (SQRT_PI * frac)
    return np.where(small, series, np.sign(x) * (1.0 - erfc))


try:
    from scipy.special import erf as _scipy_erf  # type: ignore[import-untyped,unused-ignore]
except ImportError:  # SciPy is optional
    _scipy_erf = None


# erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (beyond, erf rounds to +-1 in single precision): the
# rational approximation of Eigen's and XLA's float erf. Evaluated in float64 it is within 1.6
# ulp of the float32 result (checked on a dense grid in tests/test_pointwise_ops.py), and a
# few vectorized passes, where a per-element erf (SciPy's) costs 30x a NumPy exp.
_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02)


_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
          -7.37332916720468e-03, -1.42647390514189e-02)


_ERF_CHUNK = 32768  # float64 scratch of 256 KiB each: stays in cache, no fresh pages


def _erf_single(a: np.ndarray) -> np.ndarray:
    """erf of a single- or half-precision array, computed in float64 a chunk at a time and
    rounded once into a float32 array of the input's layout."""
    src = np.ravel(a)
    dst = np.empty(src.shape, np.float32)
    n = src.shape[0]
    m = min(_ERF_CHUNK, n)
    x, x2, p, q = (np.empty(m) for _ in range(4))
    for start in range(0, n, _ERF_CHUNK):
        k = min(start + _ERF_CHUNK, n) - start
        xs, x2s, ps, qs = x[:k], x2[:k], p[:k], q[:k]
        np.clip(src[start:start + k], -4.0, 4.0, out=xs)
        np.multiply(xs, xs, out=x2s)
        # Horner's rule, its first step (lead coefficient times x^2) written into the buffer
        np.multiply(x2s, _ERF_P[0], out=ps)
        ps += _ERF_P[1]
        for c in _ERF_P[2:]:
            ps *= x2s
            ps += c
        ps *= xs
        np.multiply(x2s, _ERF_Q[0], out=qs)
        qs += _ERF_Q[1]
        for c in _ERF_Q[2:]:
            qs *= x2s
            qs += c
        np.divide(ps, qs, out=dst[start:start + k])
    res = dst.reshape(a.shape)
    if a.ndim < 2 or a.flags.c_contiguous:
        return res
    out = np.empty_like(a, dtype=np.float32)  # keeps a transposed (or permuted) layout
    out[...] = res
    return out


def erf_array(a: np.ndarray) -> np.ndarray:
    """erf of a float array in its own dtype."""
    if a.dtype == np.float64:
        return _scipy_erf(a) if _scipy_erf is not None else _erf_series(a)
    out = _erf_single(np.asarray(a))  # float32
    return out if out.dtype == a.dtype else out.astype(a.dtype)


def _rounding(ufunc, kernel: str):
    def forward(a):
        if a.dtype.kind in "iub":
            _check_kind(a, kernel)
            return a.copy()  # integers are already whole; torch returns a copy
        return ufunc(a)

    return forward


def _round_decimals_forward(a, decimals):
    if a.dtype.kind in "iub":
        raise not_implemented("round_cpu" if decimals else "round_vml_cpu", a.dtype)
    work = a if a.dtype.itemsize >= 4 else a.astype(np.float32)  # half types: float32 math
    scale = 10.0 ** (-decimals if decimals < 0 else decimals)
    out = np.rint(work * scale) / scale if decimals >= 0 else np.rint(work / scale) * scale
    return out.astype(a.dtype, copy=False)


def _frac(a):
    _check_kind(a, "frac_cpu", "iub")
    return np.subtract(a, np.trunc(a))


def _cpp_name(np_dtype) -> str:
    from retrograd._dtype import CPP_NAMES, from_numpy_dtype

    name = from_numpy_dtype(np_dtype).name
    return CPP_NAMES.get(name, name)


def _check_same_dtype(a, b, name: str) -> None:
    if type(b) is np.ndarray and b.dtype != a.dtype:
        raise RuntimeError(LERP_DTYPE.format(_cpp_name(a.dtype), name, _cpp_name(b.dtype)))


def _lerp(a, end, weight):
    _check_same_dtype(a, end, "end")
    _check_same_dtype(a, weight, "weight")
    _check_kind(a, "lerp_kernel_scalar" if type(weight) is not np.ndarray
                else "lerp_kernel_tensor", "iub")
    if type(weight) is not np.ndarray and a.dtype.kind == "V":
        weight = a.dtype.type(weight)
    diff = np.subtract(end, a)
    # torch's two-sided form: exact at weight 0 and at weight 1
    low = np.less(np.abs(weight), 0.5)
    if type(weight) is not np.ndarray:
        return np.add(a, weight * diff) if low else np.subtract(end, diff * (1 - weight))
    return np.where(low, a + weight * diff, end - diff * (1 - weight))


def _addcmul(a, t1, t2, value):
    _check_kind(a, "addcmul_cpu_out")
    prod = np.multiply(t1, t2)
    if value != 1:
        prod = np.multiply(prod, _value_for(prod, value))
    return np.add(a, prod)


def _value_for(arr, value):
    """The Scalar `value` in the computation dtype (torch truncates it for integer tensors)."""
    kind = arr.dtype.kind if hasattr(arr, "dtype") else "f"
    if kind == "V":
        return arr.dtype.type(value)
    if kind in "iu":
        return int(value)
    return value


def _addcdiv(a, t1, t2, value):
    # torch rejects integer tensor1 and tensor2 before promotion
    if _int_like(t1) and _int_like(t2):
        raise RuntimeError(ADDCDIV_INT)
    a, t1, t2 = promote_args((a, t1, t2), (0, 1, 2))
    q = np.true_divide(t1, t2)
    if value != 1:
        q = np.multiply(q, _value_for(q, value))
    return np.add(a, q)


def _clamp(a, lo, hi):
    if lo is None and hi is None:
        raise RuntimeError(CLAMP_NONE)
    if lo is not None:
        a = np.maximum(a, lo)
    if hi is not None:
        a = np.minimum(a, hi)
    return a


def _clamp_scalar(a, lo, hi):
    a, lo, hi = promote_args((a, lo, hi), (0, 1, 2))
    if a.dtype.kind == "b":
        kernel = "clamp_scalar_cpu" if lo is not None and hi is not None else \
            "clamp_min_scalar_cpu" if lo is not None else "clamp_max_scalar_cpu"
        raise not_implemented(kernel, a.dtype)
    return _clamp(a, lo, hi)


def _clamp_mask(self, min, max, ge, le, both):  # noqa: A002 - torch's argument names
    """Where clamp passed self through (None: everywhere), with the given comparison ops."""
    if min is not None and max is not None:
        return both(ge(self, min), le(self, max))
    if min is not None:
        return ge(self, min)
    if max is not None:
        return le(self, max)
    return None


def _where(condition, a, b):
    if condition.dtype.kind != "b":
        from retrograd._ops.layout import type_name

        raise RuntimeError(WHERE_COND.format(type_name(condition.dtype)))
    a, b = promote_args((a, b), (0, 1))
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        # np.where does not treat Python scalars as weak: give both the result dtype
        target = a.dtype if type(a) is np.ndarray else b.dtype if type(b) is np.ndarray \
            else result_dtype((a, b)).np
        a, b = np.asarray(a, dtype=target), np.asarray(b, dtype=target)
    return np.where(condition, a, b)


def _direct_binary(ufunc):
    def direct(dst, other, *rest):
        ufunc(dst, other, out=dst)

    return direct


def _direct_add(ufunc):
    def direct(dst, other, alpha):
        if ufunc is np.subtract and type(other) is bool:
            _check_sub(dst, other)
        if type(alpha) is bool:
            raise ValueError  # the general path checks alpha and raises torch's error
        if alpha != 1:
            other = np.multiply(other, alpha)
        ufunc(dst, other, out=dst)

    return direct


def _direct_unary(ufunc):
    def direct(dst):
        ufunc(dst, out=dst)

    return direct


def _lerp_direct(dst, end, weight):
    """dst.lerp_(end, w) for a float scalar weight, written in place (optimizers' hot path)."""
    diff = np.subtract(end, dst)
    if -0.5 < weight < 0.5:
        diff *= weight
        np.add(dst, diff, out=dst)
    else:
        diff *= 1 - weight
        np.subtract(end, diff, out=dst)


def _check_clamp_cast(dst, *bounds) -> None:
    """Scalar clamp_ checks the cast itself, naming the output type as C++ does."""
    target = result_dtype((dst,) + bounds).np
    if target != dst.dtype and (target.kind in "fV" and dst.dtype.kind in "iub"
                                or target.kind in "iu" and dst.dtype.kind == "b"):
        from retrograd._ops.layout import CAST_ERROR, type_name

        raise RuntimeError(CAST_ERROR.format(type_name(target), _cpp_name(dst.dtype)))


def _addc_direct(ufunc):
    def direct(dst, t1, t2, value):
        q = ufunc(t1, t2)
        if value != 1:
            q *= value
        np.add(dst, q, out=dst)

    return direct


def _fill(dst, value):
    if type(value) is np.ndarray:
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions.")
    elif dst.dtype.kind in "iu" and type(value) in (int, float):
        # torch's checked conversion: a value out of the integer range is an error, and a
        # negative one wraps into an unsigned dtype (NumPy refuses both alike)
        check_fits(value, D.from_numpy_dtype(dst.dtype))
        value = np.array(value).astype(dst.dtype) if type(value) is int else value
    else:
        check_int_scalar(value)
    dst[...] = value


def _logit(a, eps):
    """log(x / (1 - x)), x first held in [eps, 1 - eps] when eps is given. The bounds are
    tested one after the other (below lo, else above hi), as torch's kernel does: for
    eps > 0.5, where lo > hi, np.clip would differ."""
    if eps is not None:
        lo, hi = a.dtype.type(eps), a.dtype.type(1 - eps)
        a = np.where(a < lo, lo, np.where(a > hi, hi, a))
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 and 1 give -inf and inf, quietly
        return np.log(a / (1 - a))
