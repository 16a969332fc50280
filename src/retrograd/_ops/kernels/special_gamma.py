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

from retrograd._ops.layout import not_implemented, type_name

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
    Stirling's series above, and the reflection formula below 0 (+inf at 0 and the negative
    integers). Within a few ulps of the C library's lgamma."""
    x = np.asarray(x, dtype=np.float64)
    out = np.full(x.shape, np.inf)
    with np.errstate(all="ignore"):
        out[np.isnan(x)] = np.nan
        tiny = (x > 0) & (x < 0.5)
        out[tiny] = _lgamma1p_taylor(x[tiny]) - np.log(x[tiny])
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
        neg = (x < 0) & np.isfinite(x) & (x != np.round(x))
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


def lgamma_array(a: np.ndarray) -> np.ndarray:
    """log|Gamma(a)| in a's floating dtype (computed in float64)."""
    return lgamma(np.asarray(a, dtype=np.float64)).astype(a.dtype, copy=False)
