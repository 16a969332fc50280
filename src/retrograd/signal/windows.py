"""torch.signal.windows: window functions written on the public ops, as torch writes them, so
requires_grad=True gives the same graph (the window is the result of ops on a linspace)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import retrograd
from retrograd._tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _check(name: str, M: int, dtype: Any, layout: Any) -> Any:
    d = retrograd.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout != "strided":
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if d not in (retrograd.float32, retrograd.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {d}")
    return d


def _empty_or_ones(M: int, d: Any, requires_grad: bool, ones: bool) -> Tensor | None:
    if M == 0:
        return retrograd.empty((0,), dtype=d, requires_grad=requires_grad)
    if M == 1 and ones:
        return retrograd.ones((1,), dtype=d, requires_grad=requires_grad)
    return None


def _span(M: int, sym: bool) -> int:
    # a periodic (sym=False) window is spaced as the symmetric one of length M + 1
    return M if not sym and M > 1 else M - 1


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype: Any = None, layout: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    d = _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    early = _empty_or_ones(M, d, requires_grad, ones=False)
    if early is not None:
        return early
    c = _span(M, sym) / 2.0 if center is None else center
    k = retrograd.linspace(-c / tau, (M - 1 - c) / tau, M, dtype=d, requires_grad=requires_grad)
    return retrograd.exp(-retrograd.abs(k))


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    d = _check("cosine", M, dtype, layout)
    early = _empty_or_ones(M, d, requires_grad, ones=False)
    if early is not None:
        return early
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    k = retrograd.linspace(0.5 * step, (M - 0.5) * step, M, dtype=d,
                           requires_grad=requires_grad)
    return retrograd.sin(k)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    d = _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    early = _empty_or_ones(M, d, requires_grad, ones=False)
    if early is not None:
        return early
    start = -_span(M, sym) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = retrograd.linspace(start * scale, (start + M - 1) * scale, M, dtype=d,
                           requires_grad=requires_grad)
    return retrograd.exp(-(k ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    d = _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    early = _empty_or_ones(M, d, requires_grad, ones=True)
    if early is not None:
        return early
    b = retrograd.tensor(beta, dtype=d)
    step = 2.0 * b / (M if not sym else M - 1)
    end = retrograd.minimum(b, -b + (M - 1) * step)
    k = retrograd.linspace(-b, end, M, dtype=d, requires_grad=requires_grad)
    return retrograd.i0(retrograd.sqrt(b * b - retrograd.pow(k, 2))) / retrograd.i0(b)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype: Any = None,
                   layout: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
    d = _check("general_cosine", M, dtype, layout)
    early = _empty_or_ones(M, d, requires_grad, ones=True)
    if early is not None:
        return early
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (M if not sym else M - 1)
    k = retrograd.linspace(0, (M - 1) * step, M, dtype=d, requires_grad=requires_grad)
    coef = retrograd.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=d,
                            requires_grad=requires_grad)
    i = retrograd.arange(coef.shape[0], dtype=d, requires_grad=requires_grad)
    return (coef.unsqueeze(-1) * retrograd.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    _check("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    d = _check("bartlett", M, dtype, layout)
    early = _empty_or_ones(M, d, requires_grad, ones=True)
    if early is not None:
        return early
    step = 2 / (M if not sym else M - 1)
    k = retrograd.linspace(-1, -1 + (M - 1) * step, M, dtype=d, requires_grad=requires_grad)
    return 1 - retrograd.abs(k)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
