"""torch's float32 logarithm, sine and cosine for its normal blocks, operation for operation.

torch fills float32 normals 16 at a time (NOTE [torch's random streams]) with vectorized
approximations of log and sincos (Cephes' polynomials in the form of the avx_mathfun library:
a range reduction on the float's bits, then short polynomials). Its compiler fuses each
multiplication that feeds an addition into one fused multiply-add; `fma32` reproduces those
(exact float32 products in float64, one rounding), and plain NumPy float32 operations the rest,
so the values are torch's bit for bit. Work goes a chunk at a time, to stay in cache.
"""

from __future__ import annotations

import numpy as np

_F = np.float32
_I = np.int32

_LOG_P = tuple(_F(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1,
                                -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
                                2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)
_SQRTHF = _F(0.707106781186547524)
_MIN_NORM = _F(1.17549435e-38)
_FOPI = _F(1.27323954473516)  # 4 / pi
_DP = (_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8))
_SIN_P = (_F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1))
_COS_P = (_F(2.443315711809948e-5), _F(-1.388731625493765e-3), _F(4.166664568298827e-2))
_HALF, _ONE = _F(0.5), _F(1.0)
_CHUNK = 2048  # rows of 16: float64 temporaries of 128 KiB


def fma32(a, b, c) -> np.ndarray:
    """a * b + c rounded once to float32, for float32 operands: the product is exact in
    float64, so only a sum that float64 rounds onto a float32 tie could round twice; those
    few take the exact path."""
    s = np.multiply(a, b, dtype=np.float64)
    s += c
    out = s.astype(_F)
    tie = (s.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        idx = np.nonzero(tie)
        out[idx] = _fma_exact(np.broadcast_to(a, s.shape)[idx], np.broadcast_to(b, s.shape)[idx],
                              np.broadcast_to(c, s.shape)[idx])
    return out


def _fma_exact(a, b, c) -> np.ndarray:
    """fma32 through the error of the float64 sum, which breaks the tie."""
    p = np.multiply(a, b, dtype=np.float64)
    c64 = np.asarray(c, np.float64)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    s = np.where(err > 0, np.nextafter(s, np.inf), np.where(err < 0, np.nextafter(s, -np.inf), s))
    return s.astype(_F)


def log(x: np.ndarray) -> np.ndarray:
    """avx_mathfun's log256_ps on float32 values (> 0 here: 1 - u of a uniform u)."""
    x = np.maximum(x, _MIN_NORM)
    bits = x.view(_I)
    e = ((bits >> 23) - 0x7F).astype(_F) + _ONE  # the exponent (the values are positive)
    x = ((bits & _I(~0x7F800000)) | _HALF.view(_I)).view(_F)  # the mantissa in [0.5, 1)
    small = x < _SQRTHF
    tmp = np.where(small, x, _F(0))
    x = x - _ONE
    e = e - np.where(small, _ONE, _F(0))
    x = x + tmp
    z = x * x
    y = np.full(x.shape, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = fma32(y, x, p)
    y = fma32(y * x, z, e * _LOG_Q1)
    y = fma32(-z, _HALF, y)
    return fma32(e, _LOG_Q2, x + y)


def sincos(x: np.ndarray) -> tuple:
    """avx_mathfun's sincos256_ps on float32 values (0 <= x < 2 pi here)."""
    sign_sin = x.view(_I) & _I(-0x80000000)
    x = np.abs(x)
    j = ((x * _FOPI).astype(_I) + 1) & ~1  # the octant, rounded up to even
    y = j.astype(_F)
    swap_sin = (j & 4) << 29
    first_poly = (j & 2) == 0
    for dp in _DP:  # x - y pi/4 in three parts (extended precision reduction)
        x = fma32(y, dp, x)
    sign_cos = (~(j - 2) & 4) << 29
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    yc = fma32(_COS_P[0], z, _COS_P[1])
    yc = fma32(yc, z, _COS_P[2])
    yc = fma32(yc * z, z, -(z * _HALF)) + _ONE
    ys = fma32(_SIN_P[0], z, _SIN_P[1])
    ys = fma32(ys, z, _SIN_P[2])
    ys = fma32(ys * z, x, x)
    s = np.where(first_poly, ys, yc)
    c = np.where(first_poly, yc, ys)
    return (s.view(_I) ^ sign_sin).view(_F), (c.view(_I) ^ sign_cos).view(_F)


def box_muller(u: np.ndarray) -> np.ndarray:
    """torch's float32 normal_fill_16 on rows of 16 float32 uniforms (before * std + mean):
    r cos(theta) in columns 0-7 and r sin(theta) in 8-15, r = sqrt(-2 log(1 - u[:8])),
    theta = 2 pi u[8:]."""
    out = np.empty(u.shape, _F)
    for start in range(0, u.shape[0], _CHUNK):
        rows = u[start:start + _CHUNK]
        radius = np.sqrt(_F(-2.0) * log(_ONE - rows[:, :8]))
        s, c = sincos(_F(2.0 * np.pi) * rows[:, 8:])
        out[start:start + _CHUNK, :8] = radius * c
        out[start:start + _CHUNK, 8:] = radius * s
    return out
