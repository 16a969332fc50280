"""NumPy values of torch's spectral window functions (hann_window, hamming_window, ...).
Computed in float64 and cast to the requested dtype by the caller."""

from __future__ import annotations

import numpy as np


def _length(n: int, periodic: bool) -> int:
    # a periodic window of length n is the symmetric window of length n + 1 without its end
    return n + 1 if periodic else n


def _trim(w: np.ndarray, n: int) -> np.ndarray:
    return w[:n]


def hamming(n: int, periodic: bool, alpha: float, beta: float) -> np.ndarray:
    if n <= 1:
        return np.ones(n)
    m = _length(n, periodic)
    w = alpha - beta * np.cos(np.arange(m) * (2 * np.pi / (m - 1)))
    return _trim(w, n)


def blackman(n: int, periodic: bool) -> np.ndarray:
    if n <= 1:
        return np.ones(n)
    m = _length(n, periodic)
    x = np.arange(m) * (np.pi / (m - 1))
    return _trim(0.08 * np.cos(4 * x) - 0.5 * np.cos(2 * x) + 0.42, n)


def bartlett(n: int, periodic: bool) -> np.ndarray:
    if n <= 1:
        return np.ones(n)
    m = _length(n, periodic)
    x = np.arange(m) * (2.0 / (m - 1))
    w = np.where(np.arange(m) <= (m - 1) // 2, x, 2.0 - x)
    return _trim(w, n)


def kaiser(n: int, periodic: bool, beta: float) -> np.ndarray:
    if n <= 1:
        return np.ones(n)
    m = _length(n, periodic)
    alpha = (m - 1) / 2.0
    r = (np.arange(m) - alpha) / alpha
    w = np.i0(beta * np.sqrt(np.clip(1.0 - r * r, 0.0, None))) / np.i0(beta)
    return _trim(w, n)
