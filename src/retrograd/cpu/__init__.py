"""retrograd.cpu: torch.cpu's device-generic names for the one device retrograd has.

Work on the CPU runs as it is called (NumPy), so there is one CPU device, streams are the
default stream's order, events are complete when recorded and synchronizing has nothing to
wait for; code written against torch's device-agnostic stream API runs unchanged.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import platform
from typing import Any

from retrograd.cpu import amp

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream",
           "stream", "set_device", "device_count", "Stream", "StreamContext", "Event",
           "get_capabilities"]


def is_available() -> bool:
    """Always True: the CPU is retrograd's device."""
    return True


def is_initialized() -> bool:
    return True


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU work is done when its call returns."""


def current_device() -> str:
    return "cpu"


def set_device(device: Any) -> None:
    """The CPU is the only device; torch ignores this too."""


def device_count() -> int:
    return 1


class Stream:
    """torch.cpu.Stream: CPU work is ordered as it is called, so a stream only records."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream: Stream) -> None:
        pass

    def wait_event(self, event: Event) -> None:
        pass

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event


class Event:
    """torch.cpu.Event: complete as soon as it is recorded."""

    def query(self) -> bool:
        return True

    def record(self, stream: Stream | None = None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait(self, stream: Stream | None = None) -> None:
        pass


_default_stream = Stream()
_current_stream = _default_stream


def current_stream(device: Any = None) -> Stream:
    return _current_stream


class StreamContext(contextlib.AbstractContextManager):
    """Makes `stream` the current stream inside the block (None leaves it as it is)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self) -> None:
        global _current_stream
        if self.stream is None:
            return
        self.prev_stream, _current_stream = _current_stream, self.stream

    def __exit__(self, *exc: object) -> None:
        global _current_stream
        if self.stream is not None:
            _current_stream = self.prev_stream


def stream(stream: Stream) -> contextlib.AbstractContextManager:
    return StreamContext(stream)


# torch's names for the x86 flags, from the names NumPy's CPU dispatch reports
_FLAG_NAMES = {"SSE": "sse", "SSE2": "sse2", "SSE3": "sse3", "SSSE3": "ssse3",
               "SSE41": "sse4_1", "SSE42": "sse4_2", "POPCNT": "popcnt", "AVX": "avx",
               "F16C": "f16c", "FMA3": "fma3", "FMA4": "fma4", "AVX2": "avx2", "BMI": "bmi",
               "BMI2": "bmi2", "LZCNT": "lzcnt", "AVX512F": "avx512_f", "AVX512CD": "avx512_cd",
               "AVX512BW": "avx512_bw", "AVX512DQ": "avx512_dq", "AVX512VL": "avx512_vl",
               "AVX512IFMA": "avx512_ifma", "AVX512VBMI": "avx512_vbmi",
               "AVX512VBMI2": "avx512_vbmi2", "AVX512BITALG": "avx512_bitalg",
               "AVX512VNNI": "avx512_vnni", "AVX512VPOPCNTDQ": "avx512_vpopcntdq",
               "AVX512BF16": "avx512_bf16", "AVX512FP16": "avx512_fp16",
               "AVX5124FMAPS": "avx512_4fmaps", "AVX5124VNNIW": "avx512_4vnniw"}


def get_capabilities() -> dict:
    """The CPU's architecture, logical core count and (on x86) instruction-set flags under
    torch's names, as NumPy's CPU dispatch detected them."""
    caps: dict[str, Any] = {"architecture": platform.machine(),
                            "num_logical_cores": os.cpu_count() or 1}
    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:  # NumPy 1.x
        umath = importlib.import_module("numpy.core._multiarray_umath")
    features = umath.__cpu_features__
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686"):
        caps.update({torch_name: bool(features.get(name, False))
                     for name, torch_name in _FLAG_NAMES.items()})
    return caps
