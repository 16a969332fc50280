"""retrograd.backends.cuda: matmul and attention switches, kept for programs that set them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from retrograd import _warning_site as _ws
from retrograd._config import _sdp

SDP_KERNEL_DEPRECATED = (
    "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
    "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
    "manager, with updated signature.")


class _MatmulFlags:
    """torch.backends.cuda.matmul: precision switches for CUDA matmuls (none run here)."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "none"


matmul = _MatmulFlags()


def is_built() -> bool:
    return False


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)


_fp16_bf16_reduction_math_sdp = False


def fp16_bf16_reduction_math_sdp_allowed() -> bool:
    return _fp16_bf16_reduction_math_sdp


def allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    global _fp16_bf16_reduction_math_sdp
    _fp16_bf16_reduction_math_sdp = bool(enabled)


def is_flash_attention_available() -> bool:
    """No CUDA flash-attention kernel is built (the CPU's fused kernel is not this one)."""
    return False


def is_ck_sdpa_available() -> bool:
    return False


def can_use_flash_attention(params: Any, debug: bool = False) -> bool:
    """CUDA's kernels never run here."""
    return False


def can_use_efficient_attention(params: Any, debug: bool = False) -> bool:
    return False


def can_use_cudnn_attention(params: Any, debug: bool = False) -> bool:
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True, enable_cudnn: bool = True) -> Iterator[dict]:
    """Deprecated: nn.attention.sdpa_kernel with the backends whose flags are True."""
    from retrograd.nn.attention import SDPBackend, sdpa_kernel

    _ws.warn(SDP_KERNEL_DEPRECATED, FutureWarning, stacklevel=3)
    chosen = [backend for backend, on in ((SDPBackend.FLASH_ATTENTION, enable_flash),
                                          (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
                                          (SDPBackend.MATH, enable_math),
                                          (SDPBackend.CUDNN_ATTENTION, enable_cudnn)) if on]
    with sdpa_kernel(chosen) as context:
        yield context


def __getattr__(name: str) -> Any:
    if name == "SDPBackend":  # torch's module re-exports it
        from retrograd.nn.attention import SDPBackend

        return SDPBackend
    raise AttributeError(f"module 'retrograd.backends.cuda' has no attribute '{name}'")
