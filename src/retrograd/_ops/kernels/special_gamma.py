"""The regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P(a, x) on arrays.

torch computes them with the method SciPy took from Cephes (lower series, upper series,
continued fraction, and Temme's uniform expansion for large a near x), each chosen by region.
The same regions, iteration limits and stopping tests are used here, vectorized: each method
iterates on the elements still running until all have converged, so the values agree with
torch's to rounding, quirks included (the upper function is not 1 - P where torch computes it
directly, so small upper tails keep their precision). Everything runs in float64; narrower
floats are rounded once at the end (torch runs float32 in float32, so those agree to a few
float32 ulps).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from retrograd._ops.layout import not_implemented, relayout, type_name

MACHEP = 1.11022302462515654042e-16  # half of float64's epsilon: the stopping tolerance
MAXITER = 2000
MAXLOG = 7.09782712893383996843e2  # log of the largest float64
EULER = 0.57721566490153286061
SMALL, LARGE, SMALL_RATIO, LARGE_RATIO = 20.0, 200.0, 0.3, 4.5
_FLOATS = ("Half", "Float", "Double", "BFloat16")

# Boost's 13-term Lanczos approximation (g below): Gamma(a) = L(a) ((a + g - 0.5) / e)^(a - 0.5)
# with L(a) the ratio of these polynomials, highest degree first
LANCZOS_G = 6.024680040776729583740234375
_LANCZOS_NUM = (
    0.006061842346248906525783753964555936883222, 0.5098416655656676188125178644804694509993,
    19.51992788247617482847860966235652136208, 449.9445569063168119446858607650988409623,
    6955.999602515376140356310115515198987526, 75999.29304014542649875303443598909137092,
    601859.6171681098786670226533699352302507, 3481712.15498064590882071018964774556468,
    14605578.08768506808414169982791359218571, 43338889.32467613834773723740590533316085,
    86363131.28813859145546927288977868422342, 103794043.1163445451906271053616070238554,
    56906521.91347156388090791033559122686859)
_LANCZOS_DEN = (1.0, 66.0, 1925.0, 32670.0, 357423.0, 2637558.0, 13339535.0, 45995730.0,
                105258076.0, 150917976.0, 120543840.0, 39916800.0, 0.0)
# torch scales the expansion's remainder with pi rounded to float32; kept for equal values
_TWO_PI_F32 = 2.0 * float(np.float32(math.pi))


# --- log-gamma --------------------------------------------------------------------------------


def _zeta(s: int) -> float:
    """Riemann zeta at an integer s >= 2: 19 terms, then the Euler-Maclaurin tail."""
    n = 20
    head = math.fsum(k ** -float(s) for k in range(1, n))
    tail = n ** (1.0 - s) / (s - 1) + 0.5 * n ** -float(s)
    rising, factorial = float(s), 2.0
    for j, b in enumerate((1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730), 1):
        tail += b / factorial * rising * n ** (-s - 2.0 * j + 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        factorial *= (2 * j + 1) * (2 * j + 2)
    return head + tail


# lgamma(1 + t) = -EULER t + sum_{n >= 2} (-1)^n zeta(n) t^n / n, for |t| <= 1/2; highest first
_LGAMMA1P = tuple(reversed([0.0, -EULER] + [(-1) ** n * _zeta(n) / n for n in range(2, 60)]))


# lgamma(z) - (z - 1/2)(log z - 1) - (log(2 pi) - 1) / 2 = sum_k B_2k / (2k (2k - 1) z^(2k - 1)):
# the odd polynomial's coefficients, highest first (B_2 .. B_16)
_STIRLING = (-3617 / 122400, 1 / 156, -691 / 360360, 1 / 1188, -1 / 1680, 1 / 1260, -1 / 360,
             1 / 12)
_HALF_LOG_2PI_MINUS_HALF = 0.5 * math.log(2 * math.pi) - 0.5


def _lgamma1p_taylor(t: np.ndarray) -> np.ndarray:
    acc = np.zeros_like(t)
    for c in _LGAMMA1P:
        acc = acc * t + c
    return acc


def _ratio(x: np.ndarray, num: tuple, den: tuple) -> np.ndarray:
    """num(x) / den(x), as a polynomial in 1/x where |x| > 1 (both of degree len - 1)."""
    big = np.abs(x) > 1
    y = np.where(big, 1.0 / np.where(big, x, 1.0), x)
    p = np.where(big, num[-1], num[0])
    q = np.where(big, den[-1], den[0])
    for i in range(1, len(num)):
        p = p * y + np.where(big, num[-1 - i], num[i])
        q = q * y + np.where(big, den[-1 - i], den[i])
    return p / q


def lanczos_sum_expg_scaled(x: np.ndarray) -> np.ndarray:
    return _ratio(x, _LANCZOS_NUM, _LANCZOS_DEN)


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)| of a float64 array: Taylor series about 1 and 2 (where it vanishes, so
    small values keep their relative precision), the recurrence down to them below 8,
    Stirling's series above, and the reflection formula below -1/2 (+inf at 0 and the negative
    integers). Within a few ulps of the C library's lgamma (within ~1e-14 absolute below -1/2,
    where the reflection's terms cancel)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.full(x.shape, np.inf)
    with np.errstate(all="ignore"):
        out[np.isnan(x)] = np.nan
        # lgamma(x) = lgamma(1 + x) - log|x| near 0, on both sides (no reflection for tiny
        # negative x, where sin(pi x) would be rounded among the subnormals)
        tiny = (np.abs(x) < 0.5) & (x != 0)
        out[tiny] = _lgamma1p_taylor(x[tiny]) - np.log(np.abs(x[tiny]))
        near1 = (x >= 0.5) & (x < 1.5)
        out[near1] = _lgamma1p_taylor(x[near1] - 1.0)
        # below 8, Gamma(x) = (x - 1) ... (x - n) Gamma(x - n) with x - n in [1.5, 2.5)
        mid = (x >= 1.5) & (x < 8.0)
        z = x[mid]
        shifts = np.floor(z - 1.5)
        t = z - shifts - 2.0
        product = np.ones_like(z)
        for j in range(1, 7):
            product = np.where(shifts >= j, product * (z - j), product)
        out[mid] = np.log1p(t) + _lgamma1p_taylor(t) + np.log(product)
        # Stirling's series, grouped as the C library groups it, so that large values round
        # alike (the incomplete gamma's prefactor inherits their rounding)
        big = (x >= 8.0) & np.isfinite(x)
        z = x[big]
        w = 1.0 / z
        w2 = w * w
        tail = np.zeros_like(z)
        for c in _STIRLING:
            tail = tail * w2 + c
        out[big] = (z - 0.5) * (np.log(z) - 1.0) + (_HALF_LOG_2PI_MINUS_HALF + w * tail)
        neg = (x <= -0.5) & np.isfinite(x) & (x != np.round(x))
        if neg.any():
            z = x[neg]
            sin_pi = np.abs(np.sin(math.pi * (z - np.round(z))))
            out[neg] = math.log(math.pi) - np.log(sin_pi) - lgamma(1.0 - z)
    return out


# --- the methods ------------------------------------------------------------------------------


_SPLITTER = 134217729.0  # 2^27 + 1: splits a float64 into two halves of 26 bits


def _fused_multiply_add(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once, as a fused multiply-add gives it: Dekker's exact product and
    Knuth's exact sum, then one rounding."""
    p = a * b
    big_a, big_b = _SPLITTER * a, _SPLITTER * b
    a_hi = big_a - (big_a - a)
    b_hi = big_b - (big_b - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s = p + c
    v = s - p
    e += (p - (s - v)) + (c - v)
    return np.where(np.isfinite(e), s + e, s)


def _prefactor(a: np.ndarray, x: np.ndarray, fused: bool = False) -> np.ndarray:
    """x^a e^(-x) / Gamma(a), through the Lanczos form where x is near a (no cancellation).

    fused: a log(x) - x rounded once, not twice. torch's compiled kernel fuses it in the
    continued fraction's copy of this function and not in the series' (half an ulp of
    a log(x), 1e-13 relative for a near 1000, and the values then agree to rounding)."""
    far = np.abs(a - x) > 0.4 * np.abs(a)
    out = np.empty_like(a)
    af, xf = a[far], x[far]
    logx = np.log(xf)
    ax = (_fused_multiply_add(af, logx, -xf) if fused else af * logx - xf) - lgamma(af)
    out[far] = np.where(ax < -MAXLOG, 0.0, np.exp(ax))
    near = ~far
    an, xn = a[near], x[near]
    fac = an + LANCZOS_G - 0.5
    res = np.sqrt(fac / math.e) / lanczos_sum_expg_scaled(an)
    modest = (an < 200) & (xn < 200)
    numfac = (xn - an - LANCZOS_G + 0.5) / fac
    res *= np.where(modest, np.exp(an - xn) * np.power(xn / fac, an),
                    np.exp(an * (np.log1p(numfac) - numfac) + xn * (0.5 - LANCZOS_G) / fac))
    out[near] = res
    return out


def _lower_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P by its power series (DLMF 8.11.4)."""
    pre = _prefactor(a, x)
    out = np.zeros_like(a)
    live = np.flatnonzero(pre != 0.0)
    xs, r = x[live], a[live].copy()
    c, total = np.ones_like(r), np.ones_like(r)
    for _ in range(MAXITER):
        if not live.size:
            break
        r += 1.0
        c *= xs / r
        total += c
        stop = c <= MACHEP * total
        if stop.any():
            out[live[stop]] = total[stop]
            keep = ~stop
            live, xs, r, c, total = live[keep], xs[keep], r[keep], c[keep], total[keep]
    out[live] = total  # still short of the tolerance after MAXITER terms, as torch leaves it
    return out * pre / a


def _upper_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q for small x by DLMF 8.7.3, which avoids forming 1 - P."""
    out = np.zeros_like(a)
    live = np.arange(a.size)
    xs, av = x.copy(), a.copy()
    fac, total = np.ones_like(a), np.zeros_like(a)
    for n in range(1, MAXITER):
        if not live.size:
            break
        fac *= -xs / n
        term = fac / (av + n)
        total += term
        stop = np.abs(term) <= MACHEP * np.abs(total)
        if stop.any():
            out[live[stop]] = total[stop]
            keep = ~stop
            live, xs, av, fac, total = live[keep], xs[keep], av[keep], fac[keep], total[keep]
    out[live] = total
    logx = np.log(x)
    head = -np.expm1(a * logx - lgamma(1.0 + a))
    return head - np.exp(a * logx - lgamma(a)) * out


_BIG = 4.503599627370496e15
_BIG_INV = 2.22044604925031308085e-16


def _upper_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q by its continued fraction (DLMF 8.9.2), as convergents p_k / q_k rescaled when they
    grow large."""
    pre = _prefactor(a, x, fused=True)
    out = np.zeros_like(a)
    live = np.flatnonzero(pre != 0.0)
    y = 1.0 - a[live]
    z = x[live] + y + 1.0
    c = np.zeros_like(y)
    pkm2, qkm2 = np.ones_like(y), x[live].copy()
    pkm1, qkm1 = x[live] + 1.0, z * x[live]
    ans = pkm1 / qkm1
    for _ in range(MAXITER):
        if not live.size:
            break
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        nonzero = qk != 0
        r = pk / np.where(nonzero, qk, 1.0)
        t = np.where(nonzero, np.abs((ans - r) / r), 1.0)
        ans = np.where(nonzero, r, ans)
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        huge = np.abs(pk) > _BIG
        if huge.any():
            scale = np.where(huge, _BIG_INV, 1.0)
            pkm2, pkm1, qkm2, qkm1 = pkm2 * scale, pkm1 * scale, qkm2 * scale, qkm1 * scale
        stop = t <= MACHEP
        if stop.any():
            out[live[stop]] = ans[stop]
            keep = ~stop
            live, y, z, c, ans = live[keep], y[keep], z[keep], c[keep], ans[keep]
            pkm2, pkm1, qkm2, qkm1 = pkm2[keep], pkm1[keep], qkm2[keep], qkm1[keep]
    out[live] = ans
    return out * pre


@functools.cache
def temme_coefficients(k_max: int = 25, n_max: int = 25) -> np.ndarray:
    """d[k, n]: the coefficient of eta^n in Temme's c_k(eta) (DLMF 8.12.9-10), derived exactly.

    With mu = lambda - 1 and eta^2 / 2 = mu - log(1 + mu): c_0 = 1/mu - 1/eta and
    c_k = c_{k-1}'(eta) / eta + (-1)^k g_k / mu, g_k the coefficients of Stirling's series.
    Each step loses two orders, so c_0 is expanded 2 k_max orders further than needed."""
    m = n_max + 2 * k_max + 2
    # mu(eta): differentiating the definition gives eta (1 + mu) = mu mu'
    u = [Fraction(0), Fraction(1)]
    for n in range(2, m + 2):
        cross = sum((j * u[j] * u[n + 1 - j] for j in range(2, n)), Fraction(0))
        u.append((u[n - 1] - cross) / (n + 1))
    # s(eta) = eta / mu, so c_0 = sum_n s_{n+1} eta^n
    s = [Fraction(1)]
    for n in range(1, m + 1):
        s.append(-sum((u[j + 1] * s[n - j] for j in range(1, n + 1)), Fraction(0)))
    g = _stirling_coefficients(k_max)
    d = [[s[n + 1] for n in range(m - 1)]]
    for k in range(1, k_max):
        prev = d[-1]
        sign = -1 if k % 2 else 1
        d.append([(n + 2) * prev[n + 2] + sign * g[k] * s[n + 1] for n in range(len(prev) - 2)])
    return np.array([[float(v) for v in row[:n_max]] for row in d])


def _stirling_coefficients(k_max: int) -> list:
    """g_k with Gamma(a) ~ sqrt(2 pi / a) (a / e)^a sum_k g_k a^-k: the exponential of the
    series sum_j B_2j / (2j (2j - 1)) a^(1 - 2j)."""
    bern = _bernoulli(k_max + 2)
    f = [Fraction(0)] * (k_max + 1)
    for j in range(1, k_max // 2 + 2):
        if 2 * j - 1 <= k_max:
            f[2 * j - 1] = bern[2 * j] / (2 * j * (2 * j - 1))
    g = [Fraction(1)]
    for k in range(1, k_max + 1):
        g.append(sum((j * f[j] * g[k - j] for j in range(1, k + 1)), Fraction(0)) / k)
    return g


def _bernoulli(n: int) -> list:
    """B_0 .. B_n (B_1 = +1/2), by the Akiyama-Tanigawa algorithm."""
    row = [Fraction(0)] * (n + 1)
    out = []
    for m in range(n + 1):
        row[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    return out


def _erfc(z: np.ndarray) -> np.ndarray:
    """erfc to full relative precision: Q(1/2, z^2) for |z| >= 1/2, its series below."""
    out = np.empty_like(z)
    small = np.abs(z) < 0.5
    zs = z[small]
    z2 = zs * zs
    term, total = zs.copy(), zs.copy()
    for n in range(1, 30):  # erf(z) = 2/sqrt(pi) sum (-1)^n z^(2n+1) / (n! (2n+1))
        term *= -z2 / n
        total += term / (2 * n + 1)
    out[small] = 1.0 - 2.0 / math.sqrt(math.pi) * total
    zl = z[~small]
    half = np.full(zl.shape, 0.5)
    tail = _upper(half, zl * zl)
    out[~small] = np.where(zl > 0, tail, 2.0 - tail)
    return out


def _asymptotic(a: np.ndarray, x: np.ndarray, lower: bool) -> np.ndarray:
    """P (lower) or Q by Temme's uniform expansion for large a near x (DLMF 8.12.3-4)."""
    d = temme_coefficients()
    sgn = -1.0 if lower else 1.0
    lam = x / a
    sigma = (x - a) / a
    root = np.sqrt(-2.0 * (np.log1p(sigma) - sigma))
    eta = np.where(lam > 1, root, np.where(lam < 1, -root, 0.0))
    res = 0.5 * _erfc(sgn * eta * np.sqrt(a / 2.0))
    powers = [np.ones_like(eta)]
    for _ in range(1, d.shape[1]):
        powers.append(eta * powers[-1])
    total = np.zeros_like(a)
    afac = np.ones_like(a)
    old = np.full(a.shape, np.inf)
    running = np.ones(a.shape, dtype=bool)
    for k in range(d.shape[0]):
        ck = np.full(a.shape, d[k, 0])
        adding = running.copy()
        for n in range(1, d.shape[1]):
            step = d[k, n] * powers[n]
            ck = np.where(adding, ck + step, ck)
            adding &= ~(np.abs(step) < MACHEP * np.abs(ck))
        term = ck * afac
        size = np.abs(term)
        running &= ~(size > old)  # the terms started growing: the series is cut off here
        total = np.where(running, total + term, total)
        running &= ~(size < MACHEP * np.abs(total))
        old = np.where(running, size, old)
        afac = np.where(running, afac / a, afac)
        if not running.any():
            break
    return res + sgn * np.exp(-0.5 * a * eta * eta) * total / np.sqrt(_TWO_PI_F32 * a)


# --- choosing the method ---------------------------------------------------------------------


def _near(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Where Temme's expansion is used: large a with x close to it."""
    gap = np.abs(x - a) / a
    return ((a > SMALL) & (a < LARGE) & (gap < SMALL_RATIO)) | (
        (a > LARGE) & (gap < LARGE_RATIO / np.sqrt(a)))


def _by_region(a: np.ndarray, x: np.ndarray, regions: list) -> np.ndarray:
    """Each (mask, method) in order computes the elements it is the first to claim."""
    out = np.empty_like(a)
    free = np.ones(a.shape, dtype=bool)
    for mask, method in regions:
        take = mask & free
        if take.any():
            out[take] = method(a[take], x[take])
        free &= ~take
    return out


def _lower(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P for finite a > 0 and x > 0 (1-D arrays)."""
    above = (x > 1.0) & (x > a)
    return _by_region(a, x, [
        (_near(a, x), lambda a, x: _asymptotic(a, x, True)),
        (above & (x > 1.1), lambda a, x: 1.0 - _upper_fraction(a, x)),
        (above, lambda a, x: 1.0 - _upper_series(a, x)),
        (np.ones(a.shape, dtype=bool), _lower_series),
    ])


def _upper(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q for finite a > 0 and x > 0 (1-D arrays)."""
    with np.errstate(divide="ignore"):
        small_x = (x <= 0.5) & (-0.4 / np.log(x) < a)
    from_lower = ((x > 1.1) & (x < a)) | small_x | ((x > 0.5) & (x <= 1.1) & (x * 1.1 < a))
    return _by_region(a, x, [
        (_near(a, x), lambda a, x: _asymptotic(a, x, False)),
        (from_lower, lambda a, x: 1.0 - _lower_series(a, x)),
        (x > 1.1, _upper_fraction),
        (np.ones(a.shape, dtype=bool), _upper_series),
    ])


def _evaluate(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """P or Q over float64 arrays of one shape, torch's values at the edges: NaN for negative
    arguments (and for a = 0 unless x > 0, and for both infinite), the limits elsewhere."""
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)  # the values at x = 0 and at x = inf
    regular = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    choices = np.select(
        [(x < 0) | (a < 0), a == 0, x == 0, np.isinf(a), np.isinf(x), ~regular],
        [np.nan, np.where(x > 0, hi, np.nan), lo, np.where(np.isinf(x), np.nan, lo), hi,
         np.nan], np.nan)
    if regular.any():
        method = _upper if upper else _lower
        choices[regular] = method(a[regular], x[regular])
    return choices


def _gamma_kernel(a, x, out: np.ndarray | None, upper: bool) -> np.ndarray:
    name = "igammac_cpu" if upper else "igamma_cpu"
    a, x = np.asarray(a), np.asarray(x)
    ab, xb = np.broadcast_arrays(a, x)  # a shape mismatch is reported before the dtype
    dtype = np.result_type(a, x)
    if type_name(dtype) not in _FLOATS:
        raise not_implemented(name, dtype)
    with np.errstate(all="ignore"):
        flat = _evaluate(ab.astype(np.float64).ravel(), xb.astype(np.float64).ravel(), upper)
    res = flat.reshape(ab.shape)
    if out is None:
        return res.astype(dtype, copy=False)
    out[...] = res
    return out


def igamma(a, x, out: np.ndarray | None = None) -> np.ndarray:
    """The regularized lower incomplete gamma function P(a, x), broadcast, in a's and x's
    (common, floating) dtype."""
    return _gamma_kernel(a, x, out, False)


def igammac(a, x, out: np.ndarray | None = None) -> np.ndarray:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _gamma_kernel(a, x, out, True)


# --- digamma, trigamma and the Hurwitz zeta function -----------------------------------------
#
# torch's own algorithms (Cephes' digamma and zeta, and a trigamma of its own), vectorized: the
# same operations in the same order and in the dtype torch computes them in, so the values agree
# to rounding. torch's trigamma stops its asymptotic series at x^-7, which bounds its accuracy to
# about 1e-9; the point here is torch's values, so the same series is used.

def _rounded(fn, x: np.ndarray) -> np.ndarray:
    """fn in x's dtype, correctly rounded as the C library's float functions (logf, sinf) are;
    NumPy's own float32 versions can be an ulp off."""
    if x.dtype == np.float32:
        return fn(x.astype(np.float64)).astype(np.float32)
    return fn(x)


_PSI_10 = 2.25175258906672110764  # digamma(10)
# digamma(x) - log(x) + 1/(2x) = -sum_k B_2k / (2k x^2k): the polynomial in 1/x^2, highest first
_PSI_SERIES = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
               -4.16666666666666666667E-3, 3.96825396825396825397E-3,
               -8.33333333333333333333E-3, 8.33333333333333333333E-2)


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    """digamma for x > 0: the recurrence up to 10, then the asymptotic series."""
    t = x.dtype.type
    x = x.copy()
    acc = np.zeros_like(x)
    low = x < 10
    while low.any():
        acc[low] -= t(1) / x[low]
        x[low] += t(1)
        low = x < 10
    z = t(1) / (x * x)
    poly = np.zeros_like(x)
    for c in _PSI_SERIES:
        poly = poly * z + t(c)
    tail = np.where(x < t(1e17), z * poly, t(0))
    return np.where(x == 10, acc + t(_PSI_10), acc + _rounded(np.log, x) - t(0.5) / x - tail)


def digamma(x: np.ndarray) -> np.ndarray:
    """digamma of a 1-D float32 or float64 array, in its dtype: -inf at +0 (+inf at -0), NaN at
    the negative integers and -inf, the reflection formula elsewhere below 0."""
    out = np.full_like(x, np.nan)
    zero = x == 0
    out[zero] = np.copysign(np.inf, -x[zero])
    pos = x > 0
    out[pos] = _digamma_positive(x[pos])
    neg = (x < 0) & (x != np.trunc(x))
    if neg.any():
        z = x[neg]
        # pi cot(pi x) from x's fractional part, in float64 for both dtypes as torch does
        frac = np.modf(z.astype(np.float64))[0]
        cot = (math.pi / np.tan(math.pi * frac)).astype(x.dtype)
        out[neg] = _digamma_positive(x.dtype.type(1) - z) - cot
    return out


def trigamma(x: np.ndarray) -> np.ndarray:
    """polygamma(1, x) of a 1-D float32 or float64 array, as torch computes it: reflection below
    1/2, six steps of the recurrence, then the asymptotic series."""
    t = x.dtype.type
    pi = t(math.pi)
    low = x < 0.5
    acc = np.zeros_like(x)
    s = _rounded(np.sin, pi * x[low])
    acc[low] = t(0) - (pi * pi) / (s * s)
    x = np.where(low, t(1) - x, x)
    for _ in range(6):
        acc += t(1) / (x * x)
        x = x + t(1)
    ixx = t(1) / (x * x)
    series = t(1) / t(6) - ixx * (t(1) / t(30) - ixx * (t(1) / t(42)))
    acc += (t(1) + t(1) / (t(2) * x) + ixx * series) / x
    return np.where(low, -acc, acc)


# Euler-Maclaurin denominators (2k)! / B_2k of Cephes' zeta
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def hurwitz_zeta(s, q: np.ndarray, acc) -> np.ndarray:
    """zeta(s, q) = sum_k (q + k)^-s for s > 1 (one number, or a 1-D array beside q) and a 1-D
    array q, by Cephes' method as torch has it: terms summed one by one (at least nine, and
    until q + k > 9, or until a term no longer counts), then the Euler-Maclaurin tail. The
    first power is taken in q's dtype, the rest accumulates in `acc` (torch: float64 for
    float32 and float64, float32 for 16-bit). +inf at q = 0, -1, -2, ... and -inf."""
    acc = np.dtype(acc)
    t = acc.type
    eps = t(MACHEP)
    out = np.full(q.shape, np.inf, dtype=acc)
    run = np.flatnonzero(~((q <= 0) & (q == np.floor(q))))
    with np.errstate(all="ignore"):
        if np.ndim(s):  # an exponent per element, taken along with its element
            first = np.power(q[run], -np.asarray(s, q.dtype)[run])
            x = np.asarray(s)[run].astype(acc)
        else:
            first = np.power(q[run], q.dtype.type(-s))
            x = t(s)
        total = first.astype(acc)
        a, b = q[run].astype(acc), np.zeros(run.size, acc)
        tail = _direct_sum(x, eps, run, a, b, total, out)
        if tail is not None:
            idx, w, last, partial, x = tail
            _euler_maclaurin(x, eps, idx, w, last, partial, out)
    return out


def _direct_sum(x, eps, live: np.ndarray, a: np.ndarray, b: np.ndarray, total: np.ndarray,
                out: np.ndarray) -> tuple | None:
    """The loop of one-by-one terms, run in blocks: a running cumsum adds in the loop's order
    (a += 1; total += a^-x), so each element stops exactly where the loop would. Elements the
    loop returns from are written to `out`; the others are handed on (index, a, b, total, and
    their exponents: x, or x's elements for them when x is an array beside `live`)."""
    t = a.dtype.type
    done_terms = 0
    width = 16
    handed: list = []
    per_element = bool(np.ndim(x))
    while live.size:
        m = live.size
        steps = np.cumsum(np.concatenate([a[:, None], np.ones((m, width), a.dtype)], axis=1),
                          axis=1)
        terms = np.power(steps[:, 1:], -(x[:, None] if per_element else x))
        sums = np.cumsum(np.concatenate([total[:, None], terms], axis=1), axis=1)
        # before term j the loop goes on while fewer than nine terms were added or a <= 9
        goes_on = (done_terms + np.arange(width) < 9) | (steps[:, :-1] <= t(9))
        small = (-eps * sums[:, 1:] < terms) & (terms < eps * sums[:, 1:])
        stop = ~goes_on | small
        j = np.argmax(stop, axis=1)
        rows = np.arange(m)
        stopped = stop[rows, j]
        returned = stopped & goes_on[rows, j]
        out[live[returned]] = sums[returned, j[returned] + 1]
        left = stopped & ~returned
        if left.any():
            jl = j[left]
            last = np.where(jl > 0, terms[left, np.maximum(jl - 1, 0)], b[left])
            xl = x[left] if per_element else np.full(jl.size, x)
            handed.append((live[left], steps[left, jl], last, sums[left, jl], xl))
        keep = ~stopped
        live, a, b, total = (live[keep], steps[keep, -1], terms[keep, -1], sums[keep, -1])
        if per_element:
            x = x[keep]
        done_terms += width
        width = min(2 * width, max(16, (1 << 22) // max(m, 1)))
    if not handed:
        return None
    parts = [np.concatenate(p) for p in zip(*handed)]
    if not per_element:
        parts[-1] = x  # one exponent for all: the tail keeps the scalar
    return tuple(parts)


def _euler_maclaurin(x, eps, idx: np.ndarray, w: np.ndarray, b: np.ndarray, total: np.ndarray,
                     out: np.ndarray) -> None:
    """The tail of the sum beyond w by Euler-Maclaurin, term by term until one no longer counts
    (with one exponent x the running factors are the same for every element: scalars)."""
    t = w.dtype.type
    one = t(1)
    total = total + b * w / (x - one)
    total = total - t(0.5) * b
    rising, k = one, t(0)
    finished = np.zeros(idx.size, dtype=bool)
    for c in _ZETA_A:
        rising = rising * (x + k)
        b = b / w
        term = rising * b / t(c)
        total = np.where(finished, total, total + term)
        finished |= np.abs(term / total) < eps
        k = k + one
        rising = rising * (x + k)
        b = b / w
        k = k + one
        if finished.all():
            break
    out[idx] = total


# --- entry points on arrays of any shape and floating dtype ----------------------------------


def _quiet(fn):
    """Overflow and division by zero are the results (inf at the poles), not warnings."""

    @functools.wraps(fn)
    def quiet(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return quiet


def _flat_work(a: np.ndarray, kernel: str) -> np.ndarray:
    """a's elements as a 1-D array in the dtype torch computes in: float64 for float64, float32
    for float32 and the 16-bit floats."""
    if type_name(a.dtype) not in _FLOATS:
        raise not_implemented(kernel, a.dtype)
    return a.ravel().astype(np.float64 if a.dtype == np.float64 else np.float32)


def _as_result(flat: np.ndarray, a: np.ndarray) -> np.ndarray:
    """A computed 1-D result with a's shape, dtype (rounded once) and layout."""
    return relayout(flat.reshape(a.shape).astype(a.dtype, copy=False), (a,))


@_quiet
def lgamma_array(a: np.ndarray) -> np.ndarray:
    """log|Gamma(a)| in a's floating dtype (computed in float64, 16-bit floats through float32
    as torch rounds them)."""
    work = _flat_work(a, "lgamma_vml_cpu").astype(np.float64)
    res = lgamma(work)
    if a.dtype != np.float64:
        res = res.astype(np.float32)
    return _as_result(res, a)


@_quiet
def digamma_array(a: np.ndarray) -> np.ndarray:
    """digamma(a) in a's floating dtype."""
    return _as_result(digamma(_flat_work(a, "digamma")), a)


@_quiet
def polygamma_array(n: int, a: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma (n >= 0) in a's floating dtype: digamma and trigamma for
    n = 0 and 1, otherwise (-1)^(n+1) n! zeta(n + 1, a) with n! as torch forms it,
    exp(lgamma(n + 1)) in the computing dtype."""
    kernel = ("digamma", "trigamma", "polygamma")[min(n, 2)]
    work = _flat_work(a, kernel)
    if n == 0:
        return _as_result(digamma(work), a)
    if n == 1:
        return _as_result(trigamma(work), a)
    sign = 1.0 if n % 2 else -1.0
    if a.dtype == np.float64:
        factor = sign * math.exp(float(lgamma(np.array([n + 1.0]))[0]))
        return _as_result(factor * hurwitz_zeta(n + 1, work, np.float64), a)
    f32 = np.float32
    if a.dtype == np.float32:
        zeta = hurwitz_zeta(n + 1, work, np.float64).astype(f32)
        order = f32(n) + f32(1)
    else:  # 16-bit: the sum accumulates in float32, n + 1 is formed in the 16-bit dtype
        zeta = hurwitz_zeta(n + 1, work, f32).astype(a.dtype).astype(f32)
        order = f32(np.array(n, a.dtype) + np.array(1, a.dtype))
    scale = f32(sign) * f32(math.exp(f32(lgamma(np.array([order], np.float64))[0])))
    return _as_result(scale * zeta, a)


@_quiet
def zeta_array(x, q) -> np.ndarray:
    """torch.special.zeta: the Hurwitz zeta function zeta(x, q) = sum_k (q + k)^-x, broadcast,
    in the operands' common dtype (float32 or float64: torch has no other zeta kernel; a Python
    number takes the other operand's dtype). torch's cases first, in its order: inf at x = 1,
    NaN for x < 1, inf at q = 0, -1, -2, ..., NaN for another q <= 0 with x not an integer;
    the sum (hurwitz_zeta) in float64 after the first power in the operands' dtype."""
    if type(x) is not np.ndarray:
        x = np.asarray(x, dtype=q.dtype)
    elif type(q) is not np.ndarray:
        q = np.asarray(q, dtype=x.dtype)
    if x.dtype not in (np.float32, np.float64):
        raise not_implemented("zeta_cpu", x.dtype)
    shape = np.broadcast_shapes(x.shape, q.shape)
    xs = np.broadcast_to(x, shape).ravel()
    qs = np.broadcast_to(q, shape).ravel()
    res = np.full(xs.shape, np.nan)
    non_positive = qs <= 0
    res[(xs == 1) | ((xs > 1) & non_positive & (qs == np.floor(qs)))] = np.inf
    run = np.flatnonzero(~(xs <= 1) & ~(non_positive & (xs != np.floor(xs))))
    if run.size:
        res[run] = hurwitz_zeta(xs[run], qs[run], np.float64)
    return res.reshape(shape).astype(x.dtype, copy=False)


def _row_sum(parts: list, zero: np.ndarray) -> np.ndarray:
    """torch's row sum: four interleaved partial sums, the leftovers into the first, then the
    four added up in order."""
    partial = [zero] * 4
    whole = len(parts) // 4 * 4
    for i in range(whole):
        partial[i % 4] = partial[i % 4] + parts[i]
    for part in parts[whole:]:
        partial[0] = partial[0] + part
    return ((partial[0] + partial[1]) + partial[2]) + partial[3]


_VECTOR_BYTES = 32  # torch's AVX2 kernels (what its CPU dispatch picks on most machines)


def sum_last_axis(a: np.ndarray, itemsize: int) -> np.ndarray:
    """a.sum(-1) added in the order torch's CPU sum adds a short contiguous last axis of
    elements of `itemsize` bytes (a holds them in its accumulating dtype): the row sum over
    scalars, or over whole vectors lane by lane, with the leftover scalars summed first and the
    lanes added after them. A vector of 16-bit elements loads as two float32 vectors added
    together. Rows of more than 64 vectors, which torch sums by a further cascade, are added as
    if they were shorter."""
    width = _VECTOR_BYTES // itemsize  # elements per loaded vector
    lanes = _VECTOR_BYTES // a.itemsize  # accumulator lanes
    zero = np.zeros(a.shape[:-1], a.dtype)
    p = a.shape[-1]
    if p < width:
        return _row_sum([a[..., i] for i in range(p)], zero)
    whole = p // width
    loads = [a[..., i * width:(i + 1) * width] for i in range(whole)]
    if width > lanes:
        loads = [v[..., :lanes] + v[..., lanes:] for v in loads]
    vectors = _row_sum(loads, np.zeros(a.shape[:-1] + (lanes,), a.dtype))
    total = zero
    for i in range(whole * width, p):
        total = total + a[..., i]
    for k in range(lanes):
        total = total + vectors[..., k]
    return total


@_quiet
def mvlgamma_array(a: np.ndarray, p: int) -> np.ndarray:
    """The multivariate log-gamma function of dimension p, in a's floating dtype, as torch forms
    it: sum_i lgamma(a - i/2) over i < p (each step rounded to a's dtype; 16-bit sums
    accumulate in float32), plus p (p - 1) log(pi) / 4."""
    if type_name(a.dtype) not in _FLOATS:
        raise not_implemented("arange_cpu", a.dtype)
    offsets = (np.arange(p, dtype=np.float64) * 0.5 + (0.5 - 0.5 * p)).astype(a.dtype)
    logs = lgamma_array(a[..., None] + offsets)
    const = float(p * (p - 1)) * math.log(math.pi) * 0.25
    if a.dtype == np.float64:
        return np.asarray(sum_last_axis(logs, 8) + const)
    if a.dtype == np.float32:
        return np.asarray(sum_last_axis(logs, 4) + np.float32(const))
    # torch rounds the sum, and the constant too, to the 16-bit dtype before adding them
    total = sum_last_axis(logs.astype(np.float32), 2).astype(a.dtype).astype(np.float32)
    return np.asarray(total + np.array(const, a.dtype).astype(np.float32)).astype(a.dtype)
