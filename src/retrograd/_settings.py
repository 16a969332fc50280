"""Process-wide settings that training scripts set at start-up: thread counts, float32 matmul
precision and deterministic algorithms. retrograd computes on NumPy, whose kernels read none of
them, so they are recorded and reported back as torch does."""

from __future__ import annotations

import os
import warnings

from retrograd import _errors as E

_state = {"threads": os.cpu_count() or 1, "interop": os.cpu_count() or 1,
          "precision": "highest", "deterministic": False, "warn_only": False}


def set_num_threads(num: int) -> None:
    if num <= 0:
        raise RuntimeError(E.SET_NUM_THREADS)
    _state["threads"] = int(num)


def get_num_threads() -> int:
    return _state["threads"]


def set_num_interop_threads(num: int) -> None:
    if num <= 0:
        raise RuntimeError(E.SET_NUM_INTEROP_THREADS)
    _state["interop"] = int(num)


def get_num_interop_threads() -> int:
    return _state["interop"]


def set_float32_matmul_precision(precision: str) -> None:
    if precision not in ("highest", "high", "medium"):
        warnings.warn(E.MATMUL_PRECISION.format(precision), UserWarning, stacklevel=2)
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    # every retrograd kernel is deterministic already
    _state["deterministic"] = bool(mode)
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]
