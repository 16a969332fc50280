"""torch's rejection samplers: standard gamma, Poisson and binomial, as its CPU kernels draw them
(NOTE [torch's random streams]).

Each value takes as many draws as its rejection loop needs, so the values are made one after
another, in order, from a buffer of the generator's 32-bit draws (`_Draws`); afterwards the
generator is left exactly where torch's would be: restored, then advanced by the draws used.
The arithmetic is torch's, in double, with the float32 roundings torch's float kernels make.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

_M53 = (1 << 53) - 1
_BUFFER = 4096


class _Draws:
    """Sequential draws from a TorchStream: torch's 53-bit uniforms and its double normals
    (with the generator's cached second sample), one at a time; the scalar forms of
    torch_sampling.unit(..., double=True) and torch_sampling._double_normals, which a change
    to either must follow."""

    def __init__(self, g) -> None:
        self._g = g
        self._saved = g.bit_generator.state
        self._buffer: list = []
        self._at = 0
        self._used = 0
        self._cache = g.normal_cache

    def _raw(self) -> int:
        if self._at == len(self._buffer):
            self._used += len(self._buffer)
            self._buffer = self._g.bit_generator.random_raw(_BUFFER).tolist()
            self._at = 0
        self._at += 1
        return self._buffer[self._at - 1]

    def uniform(self) -> float:
        high = self._raw()
        return (((high << 32) | self._raw()) & _M53) * 2.0 ** -53

    def normal(self) -> float:
        if self._cache is not None:
            value, self._cache = self._cache, None
            return value
        u1, u2 = self.uniform(), self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self._cache = r * math.sin(theta)
        return r * math.cos(theta)

    def finish(self) -> None:
        """Leave the generator as torch's: advanced by the draws used, its cache updated."""
        bits = self._g.bit_generator
        bits.state = self._saved
        used = self._used + self._at
        if used:
            bits.random_raw(used)
        self._g.normal_cache = self._cache


def _f32(v: float) -> float:
    return float(np.float32(v))


def _same(v: float) -> float:
    return v


def gamma_value(alpha: float, draws: _Draws, single: bool) -> float:
    """torch's sample_gamma (Marsaglia and Tsang, with the boost for alpha < 1); `single`: alpha
    is a float32, whose steps torch computes in float."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= math.pow(1.0 - draws.uniform(), _f32(1.0 / alpha) if single else 1.0 / alpha)
        alpha = _f32(alpha + 1.0) if single else alpha + 1.0
    third = _f32(1.0 / 3.0)
    d = _f32(alpha - third) if single else alpha - third
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = draws.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - draws.uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


_SQUEEZE = _f32(0.0331)  # a float constant in torch's kernel


def poisson_value(lam: float, draws: _Draws) -> float:
    """torch's sample_poisson: transformed rejection (Hoermann) from rate 10 up, else the
    product of uniforms."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = draws.uniform() - 0.5
            v = draws.uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    count, prod = 0, 1.0
    while True:
        prod *= draws.uniform()
        if prod <= enlam:
            return count
        count += 1


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float, rnd: Callable) -> float:
    """log(k!) minus its Stirling approximation (a table to 9, a series beyond)."""
    if k <= 9:
        return rnd(_TAIL[int(k)])
    kp1sq = rnd(rnd(k + 1) * rnd(k + 1))
    return rnd(rnd(1.0 / 12 - rnd(rnd(1.0 / 360 - rnd(rnd(1.0 / 1260) / kp1sq)) / kp1sq))
               / rnd(k + 1))


def _btrs(n: float, p: float, draws: _Draws, rnd: Callable) -> float:
    """Hoermann's BTRS transformed rejection, as torch's kernel writes it."""
    stddev = math.sqrt(rnd(rnd(n * p) * rnd(1 - p)))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = rnd(n * p) + 0.5
    v_r = 0.92 - 4.2 / b
    r = rnd(p / rnd(1 - p))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(rnd(rnd(n + 1) * p))
    while True:
        u = draws.uniform() - 0.5
        v = draws.uniform()
        us = 0.5 - abs(u)
        k = rnd(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                 + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1))
                 + _stirling_tail(m, _same) + _stirling_tail(n - m, _same)
                 - _stirling_tail(k, rnd) - _stirling_tail(n - k, rnd))
        if v <= bound:
            return k


def _inversion(n: float, p: float, draws: _Draws) -> float:
    """Counting geometric waiting times until they pass n."""
    total, count = 0.0, 0
    log_q = math.log1p(-p)
    while True:
        total += math.ceil(math.log(draws.uniform()) / log_q)
        if total > n:
            return count
        count += 1


def binomial_value(n: float, p: float, draws: _Draws, single: bool) -> float:
    """torch's sample_binomial: BTRS where n p >= 10, inversion below, on the smaller of p and
    1 - p."""
    rnd = _f32 if single else _same
    if n <= 0 or p <= 0:
        return 0.0
    if p >= 1:
        return n
    if p <= 0.5:
        return _btrs(n, p, draws, rnd) if rnd(n * p) >= 10 else _inversion(n, p, draws)
    if p > 0.5:
        q = rnd(1.0 - p)
        return n - (_btrs(n, q, draws, rnd) if rnd(n * q) >= 10 else _inversion(n, q, draws))
    return math.nan


def standard_gamma(g, alpha: np.ndarray) -> np.ndarray:
    """Gamma(alpha, 1) for each value of alpha (in C order), in alpha's dtype, at least the
    dtype's smallest normal number."""
    single = alpha.dtype == np.float32
    draws = _Draws(g)
    try:
        values = [gamma_value(a, draws, single) for a in alpha.ravel().tolist()]
    finally:
        draws.finish()
    out = np.array(values, dtype=np.float64).astype(alpha.dtype).reshape(alpha.shape)
    return np.maximum(out, np.finfo(alpha.dtype).tiny)


def poisson(g, rates: np.ndarray) -> np.ndarray:
    """Poisson counts for each rate (in C order), in the rates' dtype."""
    draws = _Draws(g)
    try:
        values = [poisson_value(lam, draws) for lam in rates.ravel().tolist()]
    finally:
        draws.finish()
    return np.array(values, dtype=np.float64).astype(rates.dtype).reshape(rates.shape)


def binomial(g, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """Binomial counts for each (count, prob) pair (broadcast, in C order), in count's dtype."""
    n, p = np.broadcast_arrays(count, prob)
    single = count.dtype == np.float32
    draws = _Draws(g)
    try:
        values = [binomial_value(a, b, draws, single)
                  for a, b in zip(n.ravel().tolist(), p.ravel().tolist())]
    finally:
        draws.finish()
    return np.array(values, dtype=np.float64).astype(count.dtype).reshape(n.shape)
