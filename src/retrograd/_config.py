"""Process-wide switches torch programs set at start-up: the default device, deterministic
algorithms, thread counts, float32 matmul precision.

retrograd computes on the CPU with NumPy, whose kernels are already deterministic; the switches
are kept so programs can set and read them, and the thread count is passed on to NumPy's BLAS
where threadpoolctl is installed.
"""

from __future__ import annotations

import os
from typing import Any

from retrograd import _errors as E
from retrograd import _warning_site as _ws
from retrograd._device import device as _device

_state: dict[str, Any] = {
    "deterministic": False, "warn_only": False, "num_threads": None, "interop_threads": None,
    "matmul_precision": "highest", "default_device": None,
}


def set_default_device(device: Any) -> None:
    """The device factories are asked for when they are given none: the CPU, or "meta", which
    retrograd records (get_default_device reports it) while its tensors stay CPU tensors (there
    is no meta device: a model built under it gets its memory, so `to_empty` and the usual
    initialization after it work). None means the CPU."""
    if device is None:
        _state["default_device"] = None
        return
    d = _device(device) if not isinstance(device, _device) else device
    _state["default_device"] = d


def get_default_device() -> _device:
    d = _state["default_device"]
    return _device("cpu") if d is None else d


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    _state["deterministic"] = mode
    _state["warn_only"] = bool(warn_only) and mode


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def _default_threads() -> int:
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, n or 1)


def set_num_threads(n: int) -> None:
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"set_num_threads(): argument 'nthreads' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n <= 0:
        raise RuntimeError(E.SET_NUM_THREADS)
    _state["num_threads"] = n
    # NumPy's BLAS (matrix products, convolutions) is where retrograd spends its threads
    from retrograd._numpy_blas import set_blas_threads

    if set_blas_threads(n):
        return
    try:  # a NumPy built against another BLAS
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(n, user_api="blas")


def get_num_threads() -> int:
    n = _state["num_threads"]
    return _default_threads() if n is None else n


def set_num_interop_threads(n: int) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise RuntimeError(E.SET_NUM_INTEROP_THREADS)
    if _state["interop_threads"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _state["interop_threads"] = n


def get_num_interop_threads() -> int:
    n = _state["interop_threads"]
    return _default_threads() if n is None else n


_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    if precision not in _PRECISIONS:
        _ws.warn(E.MATMUL_PRECISION.format(precision), UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]


# the scaled-dot-product-attention backends enabled (backends.cuda's switches, which
# nn.attention.sdpa_kernel sets; the attention op reads them)
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}
