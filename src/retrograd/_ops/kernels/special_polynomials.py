"""NumPy kernels of torch.special's orthogonal polynomials: Chebyshev T, U, V, W (and their
shifted forms on [0, 1]), Hermite H and He, Laguerre L and Legendre P, each of x at the
integer order n (both arrays, broadcast; a float n is truncated toward zero, as torch's cast).

Each is its three-term recurrence in torch's order of operations, run in float64 and rounded
once to the result's dtype (so float32 results are correctly rounded, where a float32
recurrence drifts by many ulps), with torch's special cases laid over it in torch's order of
precedence: a negative order gives 0; an endpoint (|x| = 1, or x in {0, 1} for the shifted
forms) its closed value; a high order inside the interval the trigonometric closed form
(cos(n acos x) and the like), which torch takes there instead of the recurrence; Hermite
orders past 128 (float32) or 512 (float64) are nan. The recurrence runs once up to the largest
order present, each element keeping the value at its own order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _result_dtype(x, n) -> np.dtype:
    """The result's dtype: the operands arrive cast to it, a Python number aside."""
    return x.dtype if isinstance(x, np.ndarray) else np.asarray(n).dtype


def _orders(x: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, n = np.broadcast_arrays(np.asarray(x, dtype=np.float64), n)
    with np.errstate(invalid="ignore"):
        k = n.astype(np.int64) if n.dtype.kind == "f" else n.astype(np.int64, copy=False)
    return x, k


def _recurrence(x: np.ndarray, k: np.ndarray, q1: np.ndarray,
                step: Callable[[int, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """q_0 = 1, q_1 = q1, q_{j+1} = step(j, q_{j-1}, q_j): each element's q at its order."""
    one = np.ones_like(x)
    out = np.where(k == 0, one, q1)
    top = int(k.max()) if k.size else 0
    p, q = one, q1
    with np.errstate(all="ignore"):
        for j in range(1, top):
            r = step(j, p, q)
            out = np.where(k == j + 1, r, out)
            p, q = q, r
    return out


def _finish(out: np.ndarray, k: np.ndarray, dtype: np.dtype) -> np.ndarray:
    out = np.where(k < 0, 0, out)
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf
        return np.asarray(out, dtype=dtype)


def _sign_of_order(k: np.ndarray, value: np.ndarray) -> np.ndarray:
    """value for even orders, -value for odd."""
    return np.where(k % 2 == 0, value, -value)


def chebyshev_t(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    two_x = x + x
    out = _recurrence(x, k, x, lambda j, p, q: two_x * q - p)
    with np.errstate(invalid="ignore"):
        trig = np.cos(k.astype(w) * np.arccos(x))
    out = np.where((k > 6) & (np.abs(x) < 1), trig, out)
    out = np.where(np.abs(x) == 1, np.where((x > 0) | (k % 2 == 0), 1, -1), out)
    return _finish(out, k, dt)


def chebyshev_u(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    two_x = x + x
    out = _recurrence(x, k, two_x, lambda j, p, q: two_x * q - p)
    kp1 = (k + 1).astype(w)
    with np.errstate(all="ignore"):
        a = np.arccos(x)
        s = np.sin(a)
        trig = np.where(s != 0, np.sin(kp1 * a) / s, kp1 * np.cos(kp1 * a) / x)
    out = np.where((k > 8) & (np.abs(x) < 1), trig, out)
    out = np.where(np.abs(x) == 1, np.where((x > 0) | (k % 2 == 0), kp1, -kp1), out)
    return _finish(out, k, dt)


def chebyshev_v(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    two_x = x + x
    out = _recurrence(x, k, two_x - 1, lambda j, p, q: two_x * q - p)
    odd = (k + k + 1).astype(w)
    with np.errstate(all="ignore"):
        a = np.arccos(x)
        trig = np.where(np.sin(a / 2) != 1, np.cos((k.astype(w) + w.type(0.5)) * a)
                        / np.cos(a / 2), _sign_of_order(k, odd))
    out = np.where((k > 8) & (np.abs(x) < 1), trig, out)
    out = np.where(np.abs(x) == 1, np.where(x > 0, 1, _sign_of_order(k, odd)), out)
    return _finish(out, k, dt)


def chebyshev_w(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    two_x = x + x
    out = _recurrence(x, k, two_x + 1, lambda j, p, q: two_x * q - p)
    odd = (k + k + 1).astype(w)
    ends = np.where(x > 0, odd, _sign_of_order(k, np.ones_like(x)))
    with np.errstate(all="ignore"):
        a = np.arccos(x)
        trig = np.where(np.cos(a / 2) != 1, np.sin((k.astype(w) + w.type(0.5)) * a)
                        / np.sin(a / 2), ends)
    out = np.where((k > 8) & (np.abs(x) < 1), trig, out)
    out = np.where(np.abs(x) == 1, ends, out)
    return _finish(out, k, dt)


def shifted_chebyshev_t(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    y = x + x - 1
    out = _recurrence(x, k, y, lambda j, p, q: (y + y) * q - p)
    with np.errstate(invalid="ignore"):
        trig = np.cos(k.astype(w) * np.arccos(y))
    out = np.where((k > 6) & (np.abs(y) < 1), trig, out)
    out = np.where(x == 0, _sign_of_order(k, np.ones_like(x)), out)
    out = np.where(x == 1, 1, out)
    return _finish(out, k, dt)


def shifted_chebyshev_u(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    y = x + x - 1
    out = _recurrence(x, k, y + y, lambda j, p, q: (y + y) * q - p)
    kp1 = (k + 1).astype(w)
    with np.errstate(all="ignore"):
        a = np.arccos(y)
        s = np.sin(a)
        trig = np.where(s != 0, np.sin(kp1 * a) / s, kp1 * np.cos(kp1 * a) / y)
    out = np.where((k > 6) & (np.abs(y) < 1), trig, out)
    out = np.where(x == 0, _sign_of_order(k, kp1), out)
    out = np.where(x == 1, kp1, out)
    return _finish(out, k, dt)


def shifted_chebyshev_v(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    y = x + x - 1
    out = _recurrence(x, k, y + y - 1, lambda j, p, q: (y + y) * q - p)
    odd = (k + k + 1).astype(w)
    with np.errstate(all="ignore"):
        a = np.arccos(y)
        trig = np.where(np.sin(a / 2) != 1, np.cos((k.astype(w) + w.type(0.5)) * a)
                        / np.cos(a / 2), _sign_of_order(k, odd))
    out = np.where((k > 6) & (np.abs(y) < 1), trig, out)
    out = np.where(x == 0, _sign_of_order(k, odd), out)
    out = np.where(x == 1, 1, out)
    return _finish(out, k, dt)


def shifted_chebyshev_w(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    y = x + x - 1
    out = _recurrence(x, k, y + y + 1, lambda j, p, q: (y + y) * q - p)
    odd = (k + k + 1).astype(w)
    signs = _sign_of_order(k, np.ones_like(x))
    with np.errstate(all="ignore"):
        a = np.arccos(y)
        trig = np.where(np.cos(a / 2) != 1, np.sin((k.astype(w) + w.type(0.5)) * a)
                        / np.sin(a / 2), signs)
    out = np.where((k > 4) & (np.abs(y) < 1), trig, out)
    out = np.where(x == 0, signs, out)
    out = np.where(x == 1, odd, out)
    return _finish(out, k, dt)


def _hermite_limit(dt: np.dtype) -> int:
    return 512 if dt == np.float64 else 128


def hermite_h(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The physicists' Hermite polynomials: H_{j+1} = 2x H_j - 2j H_{j-1}."""
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    two_x = x + x
    out = _recurrence(x, k, two_x, lambda j, p, q: two_x * q - w.type(2 * j) * p)
    out = np.where(k > _hermite_limit(dt), np.nan, out)
    return _finish(out, k, dt)


def hermite_he(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The probabilists' Hermite polynomials: He_{j+1} = x He_j - j He_{j-1}."""
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    out = _recurrence(x, k, x, lambda j, p, q: x * q - w.type(j) * p)
    out = np.where(k > _hermite_limit(dt), np.nan, out)
    return _finish(out, k, dt)


def laguerre_l(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """L_{j+1} = ((2j + 1 - x) L_j - j L_{j-1}) / (j + 1)."""
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    one_minus_x = 1 - x
    out = _recurrence(x, k, one_minus_x, lambda j, p, q: ((w.type(j + j) + one_minus_x) * q
                                                          - w.type(j) * p) / w.type(j + 1))
    out = np.where(x == 0, 1, out)
    return _finish(out, k, dt)


def legendre_p(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """P_{j+1} = ((2j + 1) x P_j - j P_{j-1}) / (j + 1)."""
    dt, x, k = _result_dtype(x, n), *_orders(x, n)
    w = x.dtype  # the working precision
    out = _recurrence(x, k, x, lambda j, p, q: (w.type(j + j + 1) * x * q - w.type(j) * p)
                      / w.type(j + 1))
    out = np.where(np.abs(x) == 1, np.where((x > 0) | (k % 2 == 0), 1, -1), out)
    return _finish(out, k, dt)


KERNELS = {
    "chebyshev_polynomial_t": chebyshev_t, "chebyshev_polynomial_u": chebyshev_u,
    "chebyshev_polynomial_v": chebyshev_v, "chebyshev_polynomial_w": chebyshev_w,
    "shifted_chebyshev_polynomial_t": shifted_chebyshev_t,
    "shifted_chebyshev_polynomial_u": shifted_chebyshev_u,
    "shifted_chebyshev_polynomial_v": shifted_chebyshev_v,
    "shifted_chebyshev_polynomial_w": shifted_chebyshev_w,
    "hermite_polynomial_h": hermite_h, "hermite_polynomial_he": hermite_he,
    "laguerre_polynomial_l": laguerre_l, "legendre_polynomial_p": legendre_p,
}
