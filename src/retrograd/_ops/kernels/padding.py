"""NumPy kernels of padding: constant padding and the index vectors of reflect / replicate /
circular padding with torch's checks. retrograd._ops.padding declares the ops. No Tensor here:
plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np


def _check_pad_length(pad, ndim: int) -> None:
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)}while the input has "
                           f"{ndim}dimensions.")


def _constant_pad_forward(a, pad, value):
    pad = tuple(pad)
    _check_pad_length(pad, a.ndim)
    shape, src, dst = list(a.shape), [slice(None)] * a.ndim, [slice(None)] * a.ndim
    for i in range(len(pad) // 2):
        d = a.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = a.shape[d]
        size = n + lo + hi
        if size < 0 or n + min(lo, 0) < 0 or n + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        shape[d] = size
        src[d] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[d] = slice(max(lo, 0), max(lo, 0) + max(n - max(-lo, 0) - max(-hi, 0), 0))
    out = np.full(shape, _pad_value(value, a.dtype), a.dtype)
    out[tuple(dst)] = a[tuple(src)]
    return out


def _pad_value(value, dtype: np.dtype):
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return int(value)
    return value


def _index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """Source position of each output position along one padded dim."""
    j = np.arange(-lo, n + hi)
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j >= n, 2 * (n - 1) - j, j)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    # circular: negative pads crop first; the wrap-around copies from the cropped body
    body = np.arange(max(-lo, 0), n - max(-hi, 0))
    return body[np.arange(-max(lo, 0), body.size + max(hi, 0)) % max(body.size, 1)]


def _gather_pad(a: np.ndarray, pad, mode: str) -> np.ndarray:
    out = a
    for i in range(len(pad) // 2):
        d = a.ndim - 1 - i
        out = np.take(out, _index(a.shape[d], pad[2 * i], pad[2 * i + 1], mode), axis=d)
    return np.ascontiguousarray(out)


def _scatter_pad(g: np.ndarray, shape: tuple, pad, mode: str) -> np.ndarray:
    """Adjoint of _gather_pad: sums each output position's gradient into its source."""
    for i in range(len(pad) // 2):
        d = len(shape) - 1 - i
        idx = _index(shape[d], pad[2 * i], pad[2 * i + 1], mode)
        onehot = np.zeros((idx.size, shape[d]), g.dtype)
        onehot[np.arange(idx.size), idx] = 1
        g = np.moveaxis(np.matmul(np.moveaxis(g, d, -1), onehot), -1, d)
    return np.ascontiguousarray(g)


_DIM_LETTERS = ("W", "H", "D")


def _check_index_pad(a: np.ndarray, pad, mode: str, k: int) -> None:
    nd = a.ndim
    lead = a.shape[:nd - k]
    if any(s == 0 for s in a.shape[nd - k:]) or (len(lead) == 2 and lead[1] == 0):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{list(a.shape)}")
    if mode == "reflect":
        for i in range(k):
            d = nd - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            if not (lo < a.shape[d] and hi < a.shape[d]):
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{list(a.shape)}")
    sizes = [a.shape[nd - 1 - i] for i in range(k)][::-1]
    outs = [a.shape[nd - 1 - i] + pad[2 * i] + pad[2 * i + 1] for i in range(k)][::-1]
    if any(o < 1 for o in outs):
        letters = _DIM_LETTERS[:k][::-1]
        ins = " ".join(f"{c}: {s}" for c, s in zip(letters, sizes))
        res = " ".join(f"{c}: {s}" for c, s in zip(letters, outs))
        raise RuntimeError(f"input ({ins}) is too small. Calculated output {res}")


def _circular_forward(a, pad):
    pad = tuple(pad)
    for i in range(len(pad) // 2):
        n = a.shape[a.ndim - 1 - i]
        lo, hi = pad[2 * i], pad[2 * i + 1]
        body = n + min(lo, 0) + min(hi, 0)
        if n + lo + hi < 0 or n + min(lo, 0) < 0 or n + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if lo > n or hi > n or max(lo, 0) > body or max(hi, 0) > body:
            raise RuntimeError("Padding value causes wrapping around more than once.")
    return _gather_pad(a, pad, "circular")
