"""NumPy kernels of the element-wise math functions torch has and NumPy lacks (erfc, erfcx,
erfinv, ndtri, log_ndtr, the modified Bessel functions i0 / i1, sinc, ...), and of the small
pointwise ops that need more than one ufunc call.

SciPy is not required: the special functions are evaluated in float64 here and rounded once to
the input's dtype. erf/erfc use Cephes' rational approximations (S. L. Moshier's published
coefficients), with exp(-x^2) evaluated in two parts so its error does not grow with x^2; the
inverses start from a rational guess and are polished by Newton steps on erf / erfc; the Bessel
functions are summed from their power series for small |x| and from their asymptotic series
beyond. No Tensor here.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._ops.kernels.pointwise import erf_array

SQRT_PI = math.sqrt(math.pi)
SQRT2 = math.sqrt(2.0)
TWO_OVER_SQRT_PI = 2.0 / SQRT_PI
INV_SQRT_PI = 1.0 / SQRT_PI
MAX_EXP_ARG = 7.09782712893383996843e2  # log(largest float64)

# Cephes erf/erfc coefficients: erf(x) = x T(x^2) / U(x^2) on |x| < 1, erfc(x) = exp(-x^2) P/Q
# on 1 <= x < 8 and exp(-x^2) R/S beyond (U, Q and S have an implicit leading 1)
_ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
          7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF_U = (3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
          2.26290000613890934246e4, 4.92673942608635921086e4)
_ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
           4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
           9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC_Q = (1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
           9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
           1.65666309194161350182e3, 5.57535340817727675546e2)
_ERFC_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
           6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_ERFC_S = (2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
           1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)


# --- helpers -------------------------------------------------------------------------------------


def in_float64(fn):
    """A kernel computing in float64 and rounding once to the input's (floating) dtype."""

    def kernel(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a)
        with np.errstate(all="ignore"):
            out = fn(a.astype(np.float64))
        return out if a.dtype == np.float64 else out.astype(a.dtype)

    kernel.__name__ = fn.__name__
    return kernel


def opmath(a: np.ndarray) -> np.ndarray:
    """Half types compute in float32 (torch's opmath type), others in their own dtype."""
    return a.astype(np.float32) if a.dtype.itemsize < 4 else a


def _polevl(x, coefs):
    out = np.full_like(x, coefs[0])
    for c in coefs[1:]:
        out = out * x + c
    return out


def _p1evl(x, coefs):
    out = x + coefs[0]
    for c in coefs[1:]:
        out = out * x + c
    return out


def _exp_square(x: np.ndarray, sign: float) -> np.ndarray:
    """exp(sign * x^2) without the error of rounding x^2 first: x = m + f with m a multiple of
    1/128 (so m^2 is exact), and exp(sign m^2) exp(sign (2 m f + f^2))."""
    x = np.abs(x)
    m = np.floor(x * 128.0 + 0.5) / 128.0
    f = x - m
    rest = np.where(np.isinf(x), 0.0, 2.0 * m * f + f * f)
    return np.exp(sign * (m * m)) * np.exp(sign * rest)


# --- erf family (float64) ------------------------------------------------------------------------


def _erf_small(x: np.ndarray) -> np.ndarray:
    z = x * x
    return x * _polevl(z, _ERF_T) / _p1evl(z, _ERF_U)


def _erfc_ratio(ax: np.ndarray) -> np.ndarray:
    """erfc(x) exp(x^2) for x >= 1 (Cephes' P/Q below 8, R/S above; its limit 1/(x sqrt(pi))
    from 5e7 on, as torch's erfcx, where the next term is below rounding)."""
    mid = _polevl(ax, _ERFC_P) / _p1evl(ax, _ERFC_Q)
    far = _polevl(ax, _ERFC_R) / _p1evl(ax, _ERFC_S)
    out = np.where(ax < 8.0, mid, far)
    return np.where(ax > 5e7, INV_SQRT_PI / ax, out)


def erfc64(x: np.ndarray) -> np.ndarray:
    ax = np.abs(x)
    big = np.maximum(ax, 1.0)
    ratio = _erfc_ratio(big)
    tail = _exp_square(big, -1.0) * ratio
    # past exp's range the product would flush early: one exp of the sum keeps subnormals
    tail = np.where(big * big > MAX_EXP_ARG - 2.0,
                    np.exp(-(big * big) + np.log(ratio)), tail)
    tail = np.where(x < 0, 2.0 - tail, tail)
    return np.where(ax < 1.0, 1.0 - _erf_small(np.where(ax < 1.0, x, 0.0)), tail)


def erfcx64(x: np.ndarray) -> np.ndarray:
    """exp(x^2) erfc(x): the ratio itself for x >= 1, so no overflow for large x."""
    ax = np.abs(x)
    ratio = _erfc_ratio(np.maximum(ax, 1.0))
    small = _exp_square(x, 1.0) * (1.0 - _erf_small(np.where(ax < 1.0, x, 0.0)))
    # x <= -1: 2 exp(x^2) - erfcx(|x|), overflowing to inf as torch's does
    neg = 2.0 * _exp_square(x, 1.0) - ratio
    return np.where(ax < 1.0, small, np.where(x > 0, ratio, neg))


def _erfinv_guess(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A single-precision rational guess of erfinv(x), w = -log((1 - x)(1 + x)) (M. Giles,
    "Approximating the erfinv function", 2010)."""
    c = w - 2.5
    central = _polevl(c, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                          0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                          1.50140941))
    t = np.sqrt(w) - 3.0
    tail = _polevl(t, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                       0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))
    return np.where(w < 5.0, central, tail) * x


def _erfcinv_positive(c: np.ndarray) -> np.ndarray:
    """erfcinv(c) for 0 < c <= 1 (result >= 0): Newton steps on log(erfc(y)) = log(c), which
    is nearly quadratic in y, so the steps converge fast even deep in the tail and small c
    keeps its relative accuracy."""
    w = -np.log(c * (2.0 - c))
    # beyond the guess's range (c < 1e-7), the tail's own asymptotics: y^2 = -log(c y sqrt(pi))
    deep = np.sqrt(np.maximum(w, 1.0))
    deep = np.sqrt(np.maximum(-np.log(c) - np.log(deep * SQRT_PI), 1.0))
    y = np.where(w < 16.0, _erfinv_guess(1.0 - c, w), deep)
    log_c = np.log(c)
    for _ in range(4):
        ratio = erfcx64(y)
        y = y + (np.log(ratio) - y * y - log_c) * ratio / TWO_OVER_SQRT_PI
    return y


def erfcinv64(c: np.ndarray) -> np.ndarray:
    """erfcinv on [0, 2]: inf at 0, -inf at 2, NaN outside."""
    upper = c > 1.0
    half = np.where(upper, 2.0 - c, c)  # exact for c in [1, 2]
    inside = (half > 0.0) & (half <= 1.0)
    y = _erfcinv_positive(np.where(inside, half, 0.5))
    y = np.where(half == 0.0, np.inf, np.where(inside, y, np.nan))
    return np.where(upper, -y, y)


def erfinv64(x: np.ndarray) -> np.ndarray:
    ax = np.abs(x)
    # near 0, Newton on erf; for |x| > 0.5 on erfc(y) = 1 - |x| (exact there)
    xs = np.where(ax <= 0.5, x, 0.0)
    y = _erfinv_guess(xs, -np.log((1.0 - xs) * (1.0 + xs)))
    for _ in range(3):
        y = y - (erf_array(y) - xs) / (TWO_OVER_SQRT_PI * np.exp(-y * y))
    far = np.copysign(erfcinv64(np.where(ax > 0.5, 1.0 - ax, 0.5)), x)
    out = np.where(ax <= 0.5, y, far)
    return np.where((ax > 1.0) | np.isnan(x), np.nan, out)


def ndtri64(p: np.ndarray) -> np.ndarray:
    """The standard normal quantile: sqrt(2) erfinv(2 p - 1) near the middle (2 p - 1 is exact
    there), -sqrt(2) erfcinv(2 p) in the tails (keeps small p's relative accuracy)."""
    middle = (p > 0.25) & (p < 0.75)
    centre = SQRT2 * erfinv64(np.where(middle, 2.0 * p - 1.0, 0.0))
    return np.where(middle, centre, -SQRT2 * erfcinv64(2.0 * p))


def log_ndtr64(x: np.ndarray) -> np.ndarray:
    """log of the standard normal CDF: through erfcx in the left tail (no underflow), log1p of
    the small upper tail elsewhere."""
    t = x / SQRT2
    left = np.log(erfcx64(-t) / 2.0) - t * t
    right = np.log1p(-erfc64(t) / 2.0)
    return np.where(x < -1.0, left, right)


erfc_array = in_float64(erfc64)
erfcx_array = in_float64(erfcx64)
erfinv_array = in_float64(erfinv64)
ndtri_array = in_float64(ndtri64)
log_ndtr_array = in_float64(log_ndtr64)


# --- modified Bessel functions of the first kind (float64) ---------------------------------------

_SERIES_LIMIT = 30.0  # |x| below: power series; above: asymptotic series (both ~1e-16)


def _bessel_series(ax: np.ndarray, order: int) -> np.ndarray:
    """sum_k (x/2)^(2k+order) / (k! (k+order)!), all terms positive."""
    q = ax * ax / 4.0
    term = np.ones_like(ax) if order == 0 else ax / 2.0
    total = term.copy()
    for k in range(1, 200):
        term = term * q / (k * (k + order))
        total += term
        if not np.any(term > 1e-17 * total):
            break
    return total


def _bessel_asymptotic_scaled(ax: np.ndarray, order: int) -> np.ndarray:
    """exp(-x) I_order(x) for large x: (2 pi x)^-1/2 sum_k (-1)^k a_k / x^k."""
    mu = 4.0 * order * order
    term = np.ones_like(ax)
    total = term.copy()
    for k in range(1, 30):
        term = term * -(mu - (2 * k - 1) ** 2) / (8.0 * k * ax)
        total += term
    return total / np.sqrt(2.0 * math.pi * ax)


def _bessel_i(x: np.ndarray, order: int, scaled: bool) -> np.ndarray:
    ax = np.abs(x)
    small = ax <= _SERIES_LIMIT
    series = _bessel_series(np.where(small, ax, 0.0), order)
    if scaled:
        series = series * np.exp(-ax)
    big = np.where(small, 2.0 * _SERIES_LIMIT, ax)
    asym = _bessel_asymptotic_scaled(big, order)
    if not scaled:
        asym = asym * np.exp(big)  # inf from x > 709.78 on, as torch's (not 713.9)
    out = np.where(small, series, asym)
    if order == 1:
        out = np.copysign(out, x)  # I1 is odd
    return np.where(np.isnan(x), np.nan, out)


i0_array = in_float64(lambda x: _bessel_i(x, 0, False))
i0e_array = in_float64(lambda x: _bessel_i(x, 0, True))
i1_array = in_float64(lambda x: _bessel_i(x, 1, False))
i1e_array = in_float64(lambda x: _bessel_i(x, 1, True))


# --- simple element-wise kernels -----------------------------------------------------------------


def sinc_array(a: np.ndarray) -> np.ndarray:
    """sin(pi x) / (pi x), 1 at 0; pi x rounded in the computation dtype first, as torch."""
    x = opmath(a)
    px = x * math.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x == 0, x.dtype.type(1), np.sin(px) / px)
    return out.astype(a.dtype, copy=False)


def deg2rad_array(a: np.ndarray) -> np.ndarray:
    return (opmath(a) * (math.pi / 180.0)).astype(a.dtype, copy=False)


def rad2deg_array(a: np.ndarray) -> np.ndarray:
    return (opmath(a) * (180.0 / math.pi)).astype(a.dtype, copy=False)


def _same_dtype(x, y) -> tuple:
    """A Python number operand as a 0-d array of the other (promoted) operand's dtype: NumPy
    would otherwise compute its log in float64 and upcast a float32 result."""
    if type(x) is not np.ndarray:
        x = np.asarray(x, dtype=y.dtype)
    elif type(y) is not np.ndarray:
        y = np.asarray(y, dtype=x.dtype)
    return x, y


def xlogy_array(x, y):
    """x log(y), 0 where x is 0 (even for y = 0 or inf), NaN wherever y is NaN."""
    x, y = _same_dtype(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.multiply(x, np.log(y))
    out = np.where(np.equal(x, 0), out.dtype.type(0), out)
    return np.where(np.isnan(y), out.dtype.type(np.nan), out)


def _float_info(dtype: np.dtype):
    if dtype.kind == "V":  # ml_dtypes' bfloat16 / float8
        import ml_dtypes

        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


def nan_to_num_array(a, nan, posinf, neginf):
    """NaN, +inf and -inf replaced (defaults: 0 and the dtype's largest and lowest finite
    values); integer and bool tensors come back as copies."""
    if a.dtype.kind not in "fV":
        return a.copy()
    info = _float_info(a.dtype)
    t = a.dtype.type
    out = np.where(np.isnan(a), t(0.0 if nan is None else nan), a)
    out = np.where(a == np.inf, info.max if posinf is None else t(posinf), out)
    return np.where(a == -np.inf, info.min if neginf is None else t(neginf), out)


def heaviside_array(a, values):
    """values where a is 0, else 1 for positive a and 0 for negative (in a's dtype)."""
    step = np.greater(a, 0).astype(a.dtype)
    return np.where(np.equal(a, 0), values, step).astype(a.dtype, copy=False)


def ldexp_array(a, b):
    """a * 2^b, as torch computes it (not NumPy's exact ldexp: a float exponent is allowed)."""
    return np.multiply(a, np.exp2(b))


def frexp_arrays(a):
    """(mantissa in a's dtype, int32 exponent); half types through float32 (exact)."""
    mantissa, exponent = np.frexp(opmath(a))
    return mantissa.astype(a.dtype, copy=False), exponent.astype(np.int32, copy=False)


def xlog1py_array(x, y):
    """x log1p(y), 0 where x is 0, NaN wherever y is NaN."""
    x, y = _same_dtype(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.multiply(x, np.log1p(y))
    out = np.where(np.equal(x, 0), out.dtype.type(0), out)
    return np.where(np.isnan(y), out.dtype.type(np.nan), out)


def entr_array(a):
    """-x log(x) for x > 0, 0 at 0, -inf below, NaN for NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.negative(a) * np.log(a)
    t = a.dtype.type
    out = np.where(a == 0, t(0), out)
    return np.where(a < 0, t(-np.inf), out)
