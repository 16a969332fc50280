"""retrograd.nn.attention: choosing the scaled-dot-product-attention backend (torch's
sdpa_kernel and SDPBackend).

On the CPU two backends exist, as in torch: FLASH_ATTENTION (the fused CPU kernel, taken when
its constraints hold) and MATH (the composite of matmuls and softmax); the CUDA-only backends
can be named but never run. `sdpa_kernel` enables exactly the given backends inside its block
(the switches of retrograd.backends.cuda, as torch's) and restores them after.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import IntEnum
from typing import Any

from retrograd.backends import cuda as _cuda

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(IntEnum):
    """The attention backends torch names."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self) -> str:
        return f"SDPBackend.{self.name}"


_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
           SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[dict]:
    """Run the block with only `backends` enabled (set_priority is accepted; the CPU has one
    order, flash before math, as in torch)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    saved = dict(_cuda._sdp)
    for backend, switch in _SWITCH.items():
        _cuda._sdp[switch] = backend in chosen
    try:
        yield {}  # torch's yields an empty dict
    finally:
        _cuda._sdp.update(saved)
