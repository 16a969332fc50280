"""NumPy kernels of torch.special's Bessel and Airy functions: J0, J1, Y0, Y1, the modified
I0, I1, K0, K1 (and K0, K1 scaled by e^x), the spherical j0 and Airy's Ai.

Each follows the Cephes algorithm torch evaluates, step for step in torch's order of
operations and with its interval switches, special values and coefficient tables
(kernels/bessel_coefficients.py): rational approximations on [0, 5] and an amplitude / phase
form beyond for J and Y, Chebyshev series on two intervals for I and K, a power series near 0
and asymptotic expansions either side for Ai. Everything is computed in float64 and rounded
once to the input's dtype (float32 results are then as accurate as float64's rounded, where a
float32 evaluation loses several ulps, and stay finite where float32 intermediates overflow).

torch's large-x forms of J and Y divide by QQ without the leading term Cephes' p1evl implies,
which costs them up to ~1e-6 relative accuracy just past x = 5; the same evaluation here gives
torch's values, that error included. No Tensor here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from retrograd._ops.kernels import bessel_coefficients as C
from retrograd._ops.layout import not_implemented

PI_4 = 0.785398163397448309615660845819875721
THREE_PI_4 = 2.356194490192344928846982537459627163
SQRT_2_PI = 0.797884560802865355879892119868763737  # sqrt(2 / pi)
TWO_PI = 0.636619772367581343075535053490057448  # 2 / pi
# squares of the first two zeros of J0 and J1, factored out of their rational forms on [0, 5]
J0_Z1, J0_Z2 = 5.78318596294678452118e+00, 3.04712623436620863991e+01
J1_Z1, J1_Z2 = 1.46819706421238932572e+01, 4.92184563216946036703e+01
AIRY_C1 = 0.355028053887817239260  # Ai(0)
AIRY_C2 = 0.258819403792806798405  # -Ai'(0)
INV_SQRT_PI = 5.64189583547756286948e-01
EPS = float(np.finfo(np.float64).eps)

Array = np.ndarray


# --- evaluation helpers --------------------------------------------------------------------------


def _horner(z: Array, coefs: Sequence[float]) -> Array:
    """The polynomial with these coefficients (highest power first), from an accumulator of 0."""
    acc = np.zeros_like(z)
    for c in coefs:
        acc = acc * z + c
    return acc


def _chebyshev(y: Array, coefs: Sequence[float]) -> Array:
    """Clenshaw's sum of a Chebyshev series in Cephes' form (y is twice the reduced argument):
    b_k = y b_(k+1) - b_(k+2) + c_k, and half the difference of the first and third."""
    b = np.full_like(y, coefs[0])
    p = q = np.zeros_like(y)
    for c in coefs[1:]:
        p, q = q, b
        b = y * q - p + c
    return 0.5 * (b - p)


def _by_cases(x: Array, default: float, cases: list) -> Array:
    """out = default, then fn(x[mask]) where each (mask, fn) holds (the masks are disjoint)."""
    out = np.full(x.shape, default)
    for mask, fn in cases:
        if mask.any():
            out[mask] = fn(x[mask])
    return out


def _large_x(ax: Array, order: int, second_kind: bool) -> Array:
    """J or Y of order 0 or 1 past x = 5: sqrt(2 / (pi x)) (P cos t - 5/x Q sin t) for J and
    (P sin t + 5/x Q cos t) for Y, t = x - pi/4 (order 0) or x - 3 pi/4 (order 1)."""
    if order == 0:
        w = 25.0 / (ax * ax)
        pp, pq, qp, qq, shift = C.J0_PP, C.J0_PQ, C.J0_QP, C.J0_QQ, PI_4
    else:
        w = 5.0 / ax * (5.0 / ax)
        pp, pq, qp, qq, shift = C.J1_PP, C.J1_PQ, C.J1_QP, C.J1_QQ, THREE_PI_4
    p = _horner(w, pp) / _horner(w, pq)
    q = 5.0 / ax * (_horner(w, qp) / _horner(w, qq))
    t = ax - shift
    if second_kind:
        wave = p * np.sin(t) + q * np.cos(t)
    else:
        wave = p * np.cos(t) - q * np.sin(t)
    return wave * SQRT_2_PI / np.sqrt(ax)


# --- Bessel functions of the first and second kind -----------------------------------------------


def _j0_small(ax: Array) -> Array:
    z = ax * ax
    return (z - J0_Z1) * (z - J0_Z2) * _horner(z, C.J0_RP) / _horner(z, C.J0_RQ)


def _j0_nonneg(ax: Array) -> Array:
    """J0 at |x| (even, so this is J0 itself)."""
    return _by_cases(ax, np.nan, [
        (ax < 1e-5, lambda a: 1.0 - a * a / 4.0),
        ((ax >= 1e-5) & (ax <= 5.0), _j0_small),
        (~(ax <= 5.0), lambda a: _large_x(a, 0, False)),
    ])


def _j1_small(x: Array) -> Array:
    z = x * x
    return _horner(z, C.J1_RP) / _horner(z, C.J1_RQ) * x * (z - J1_Z1) * (z - J1_Z2)


def _j1_nonneg(ax: Array) -> Array:
    return _by_cases(ax, np.nan, [
        (ax <= 5.0, _j1_small),
        (~(ax <= 5.0), lambda a: _large_x(a, 1, False)),
    ])


def bessel_j0(x: Array) -> Array:
    return _j0_nonneg(np.abs(x))


def bessel_j1(x: Array) -> Array:
    """J1 is odd: J1(-x) = -J1(x); -0 keeps its sign."""
    value = _j1_nonneg(np.abs(x))
    return np.where(np.signbit(x), -value, value)


def _y0_small(x: Array) -> Array:
    z = x * x
    return _horner(z, C.Y0_YP) / _horner(z, C.Y0_YQ) + TWO_PI * np.log(x) * _j0_nonneg(x)


def _y1_small(x: Array) -> Array:
    z = x * x
    return (x * (_horner(z, C.Y1_YP) / _horner(z, C.Y1_YQ))
            + TWO_PI * (_j1_nonneg(x) * np.log(x) - 1.0 / x))


def _second_kind(x: Array, order: int, small: Callable[[Array], Array]) -> Array:
    """Y0 or Y1: -inf at 0, nan below (and at nan, through the large-x form)."""
    return _by_cases(x, np.nan, [
        (x == 0.0, lambda a: np.full_like(a, -np.inf)),
        ((x > 0.0) & (x <= 5.0), small),
        (~(x <= 5.0), lambda a: _large_x(a, order, True)),
    ])


def bessel_y0(x: Array) -> Array:
    return _second_kind(x, 0, _y0_small)


def bessel_y1(x: Array) -> Array:
    return _second_kind(x, 1, _y1_small)


def spherical_bessel_j0(x: Array) -> Array:
    """sin(x) / x: its Taylor polynomial on |x| < 0.5, 0 at +-inf."""
    def near_zero(a: Array) -> Array:
        z = a * a
        acc = 1.0 / 6227020800.0
        for c in (-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0):
            acc = c + z * acc
        return 1.0 + z * acc

    ax = np.abs(x)
    return _by_cases(x, np.nan, [
        (np.isinf(x), np.zeros_like),
        (ax < 0.5, near_zero),
        (~(ax < 0.5) & ~np.isinf(x), lambda a: np.sin(a) / a),
    ])


# --- modified Bessel functions -------------------------------------------------------------------


def _i_series(ax: Array, order: int) -> Array:
    """e^-x I0(x) or e^-x I1(x) / x (order 1, up to 8) for x >= 0, before the factors that
    complete I."""
    inner, outer = (C.I0_A, C.I0_B) if order == 0 else (C.I1_A, C.I1_B)
    return _by_cases(ax, np.nan, [
        (ax <= 8.0, lambda a: _chebyshev(a / 2.0 - 2.0, inner)),
        (~(ax <= 8.0), lambda a: _chebyshev(32.0 / a - 2.0, outer)),
    ])


def modified_bessel_i0(x: Array) -> Array:
    ax = np.abs(x)
    s = _i_series(ax, 0)
    return np.where(ax <= 8.0, np.exp(ax) * s, np.exp(ax) * s / np.sqrt(ax))


def modified_bessel_i1(x: Array) -> Array:
    """I1 is odd (I1(-0) is +0, as torch's)."""
    ax = np.abs(x)
    s = _i_series(ax, 1)
    value = np.where(ax <= 8.0, s * ax * np.exp(ax), np.exp(ax) * s / np.sqrt(ax))
    return np.where(x < 0.0, -value, value)


def _k_inner(x: Array, order: int) -> Array:
    """K0 or K1 on (0, 2]: a Chebyshev series in x^2 and the log(x/2) I term."""
    if order == 0:
        return _chebyshev(x * x - 2.0, C.K0_A) - np.log(0.5 * x) * modified_bessel_i0(x)
    return np.log(0.5 * x) * modified_bessel_i1(x) + _chebyshev(x * x - 2.0, C.K1_A) / x


def _k(x: Array, order: int, scaled: bool) -> Array:
    """K0 or K1 (times e^x when scaled): inf at 0, nan below."""
    outer = C.K0_B if order == 0 else C.K1_B

    def inner(a: Array) -> Array:
        value = _k_inner(a, order)
        return value * np.exp(a) if scaled else value

    def beyond(a: Array) -> Array:
        s = _chebyshev(8.0 / a - 2.0, outer)
        return s / np.sqrt(a) if scaled else np.exp(-a) * s / np.sqrt(a)

    return _by_cases(x, np.nan, [
        (x == 0.0, lambda a: np.full_like(a, np.inf)),
        ((x > 0.0) & (x <= 2.0), inner),
        (~(x <= 2.0), beyond),
    ])


def modified_bessel_k0(x: Array) -> Array:
    return _k(x, 0, False)


def modified_bessel_k1(x: Array) -> Array:
    return _k(x, 1, False)


def scaled_modified_bessel_k0(x: Array) -> Array:
    return _k(x, 0, True)


def scaled_modified_bessel_k1(x: Array) -> Array:
    return _k(x, 1, True)


# --- Airy function Ai ----------------------------------------------------------------------------


def _airy_oscillating(x: Array) -> Array:
    """Ai for x < -2.09: pi^-1/2 |x|^-1/4 (sin(t) (1 + z^2 F(z^2)) - cos(t) z G(z^2)),
    zeta = 2/3 |x|^3/2, z = 1 / zeta, t = zeta + pi/4."""
    zeta = -2.0 * x * np.sqrt(-x) / 3.0
    z = 1.0 / zeta
    zz = z * z
    f = zz * _horner(zz, C.AIRY_AFN) / _horner(zz, C.AIRY_AFD)
    g = z * _horner(zz, C.AIRY_AGN) / _horner(zz, C.AIRY_AGD)
    t = -2.0 * x * np.sqrt(-x) / 3.0 + 0.25 * np.pi
    return INV_SQRT_PI / np.sqrt(np.sqrt(-x)) * (np.sin(t) * (1.0 + f) - np.cos(t) * g)


def _airy_decaying(x: Array) -> Array:
    """Ai for 2.09 <= x <= 103.892: e^-zeta / (2 sqrt(pi) x^1/4) times a rational function of
    1 / zeta."""
    zeta = 2.0 * x * np.sqrt(x) / 3.0
    r = _horner(1.0 / zeta, C.AIRY_AN) / _horner(1.0 / zeta, C.AIRY_AD)
    return INV_SQRT_PI * r / (2.0 * np.sqrt(np.sqrt(x)) * np.exp(zeta))


def _airy_series(x: Array) -> Array:
    """Ai near 0 from its Maclaurin series c1 f(x) - c2 g(x): f = sum 3^k (1/3)_k x^3k / (3k)!,
    g likewise with x^(3k+1); each element stops once its last f term is below eps of f."""
    z = x * x * x
    f = np.ones_like(x)
    g = x.copy()
    m = np.ones_like(x)
    n = x.copy()
    active = np.ones(x.shape, dtype=bool)
    k = 1.0
    for _ in range(500):
        if not active.any():
            break
        m = m * z / (k + 1.0) / (k + 2.0)
        n = n * z / (k + 2.0) / (k + 3.0)
        k += 3.0
        f = np.where(active, f + m, f)
        g = np.where(active, g + n, g)
        active &= np.abs(m / f) > EPS
    return AIRY_C1 * f - AIRY_C2 * g


def airy_ai(x: Array) -> Array:
    """nan at +-inf (and nan), 0 past x = 103.892."""
    finite = ~np.isinf(x)
    return _by_cases(x, np.nan, [
        (finite & (x > 103.892), np.zeros_like),
        (finite & (x < -2.09), _airy_oscillating),
        (finite & (x >= 2.09) & (x <= 103.892), _airy_decaying),
        (~(x < -2.09) & ~(x >= 2.09), _airy_series),
    ])


# --- kernels on arrays of any floating dtype -----------------------------------------------------


def _kernel(name: str, fn: Callable[[Array], Array]) -> Callable[[Array], Array]:
    """fn on the input in float64, rounded once to the input's dtype; torch has no kernel for
    other dtypes (half, bfloat16)."""

    def kernel(a: Array) -> Array:
        a = np.asarray(a)
        if a.dtype not in (np.float32, np.float64):
            raise not_implemented(f"{name}_cpu", a.dtype)
        with np.errstate(all="ignore"):
            out = fn(a.astype(np.float64).ravel()).reshape(a.shape)
            return out if a.dtype == np.float64 else out.astype(a.dtype)

    kernel.__name__ = name
    return kernel


KERNELS = {name: _kernel(name, fn) for name, fn in {
    "bessel_j0": bessel_j0, "bessel_j1": bessel_j1, "bessel_y0": bessel_y0,
    "bessel_y1": bessel_y1, "modified_bessel_i0": modified_bessel_i0,
    "modified_bessel_i1": modified_bessel_i1, "modified_bessel_k0": modified_bessel_k0,
    "modified_bessel_k1": modified_bessel_k1,
    "scaled_modified_bessel_k0": scaled_modified_bessel_k0,
    "scaled_modified_bessel_k1": scaled_modified_bessel_k1,
    "spherical_bessel_j0": spherical_bessel_j0, "airy_ai": airy_ai}.items()}
