"""torch's window functions for spectral analysis: hann_window, hamming_window,
blackman_window, bartlett_window and kaiser_window (leaf tensors; periodic by default)."""

from __future__ import annotations

import operator
from typing import Any

from retrograd import _dtype as D
from retrograd._layout import check_layout
from retrograd._ops.creation import _result
from retrograd._ops.kernels import spectral_windows as K
from retrograd._ops.metadata_inplace import _c_name
from retrograd._ops.registry import register


def _checked(name: str, window_length: Any, dtype: Any) -> tuple[int, D.dtype]:
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        try:
            window_length = operator.index(window_length)
        except TypeError:
            raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                            f"{type(window_length).__name__}") from None
    d = D.get_default_dtype() if dtype is None else dtype
    if d.category != D._FLOAT:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_c_name(d)}, device=cpu, layout=Strided (default), requires_grad=false "
            "(default), pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    return window_length, d


def _window(values: Any, d: D.dtype, requires_grad: bool) -> Any:
    return _result(values.astype(d.np), None, requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, pin_memory: bool = False,
                requires_grad: bool = False) -> Any:
    check_layout(layout)
    n, d = _checked("hann_window", window_length, dtype)
    return _window(K.hamming(n, periodic, 0.5, 0.5), d, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Any:
    check_layout(layout)
    n, d = _checked("hamming_window", window_length, dtype)
    return _window(K.hamming(n, periodic, float(alpha), float(beta)), d, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Any:
    check_layout(layout)
    n, d = _checked("blackman_window", window_length, dtype)
    return _window(K.blackman(n, periodic), d, requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Any:
    check_layout(layout)
    n, d = _checked("bartlett_window", window_length, dtype)
    return _window(K.bartlett(n, periodic), d, requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Any:
    check_layout(layout)
    n, d = _checked("kaiser_window", window_length, dtype)
    return _window(K.kaiser(n, periodic, float(beta)), d, requires_grad)


for _f in (hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window):
    register(_f.__name__, _f)
