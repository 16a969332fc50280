"""flex_attention's argument checks, with torch's messages."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from retrograd._tensor import Tensor
from retrograd.nn.attention._flex_block_mask import BlockMask


def _check_score_mod(score_mod: Callable[..., Any]) -> None:
    """torch traces score_mod with five arguments and stops when they do not bind."""
    try:
        signature = inspect.signature(score_mod)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*range(5))
    except TypeError:
        name = getattr(score_mod, "__name__", type(score_mod).__name__)
        raise RuntimeError(
            "failed to bind arguments when attempting to inline\n"
            "  Higher Order Operator: torch.ops.higher_order.flex_attention\n"
            f"  Explanation: Argument mismatch when attempting to trace function {name}.\n"
        ) from None


def _check_inputs(query: Tensor, key: Tensor, value: Tensor) -> None:
    if getattr(query, "is_nested", False) or getattr(key, "is_nested", False) \
            or getattr(value, "is_nested", False):
        raise NotImplementedError(
            "flex_attention does not support NestedTensor inputs, including "
            "torch.compile(flex_attention) with jagged NestedTensor inputs. "
            "Convert inputs to dense tensors before calling flex_attention.")
    if query.device != key.device or query.device != value.device:
        raise ValueError(
            "Expected query, key, and value to have the same device type, "
            f"but got query.device: {query.device}, key.device: {key.device}, "
            f"and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(
            "Expect query and key/value to have the same embedding dimension "
            f"but got E={query.size(-1)} and E={key.size(-1)}.")


def _check_kernel_options(kernel_options: Any, want_max: bool) -> None:
    options = {} if kernel_options is None else dict(kernel_options)
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError(
            "BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. "
            "BACKEND supersedes the legacy knob; please drop FORCE_USE_FLEX_ATTENTION "
            "and only specify the desired BACKEND.")
    backends = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")
    if "BACKEND" in options and options["BACKEND"] not in backends:
        raise ValueError(f"Invalid BACKEND value '{options['BACKEND']}'. "
                         f"Must be one of {backends}")
    if "OUTPUT_LOGSUMEXP" in options:
        raise AssertionError("OUTPUT_LOGSUMEXP must not be in kernel_options")
    if "OUTPUT_MAX" in options:
        raise AssertionError("OUTPUT_MAX must not be in kernel_options")
    if options.get("BACKEND", "AUTO") == "FLASH" and want_max:
        raise NotImplementedError(
            "Returning max scores is not supported with BACKEND='FLASH'. "
            "Use return_aux=AuxRequest(lse=True) or omit max_scores.")
    if want_max:
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")


def _check_block_mask(block_mask: BlockMask, q_len: int, kv_len: int) -> None:
    mask_q, mask_kv = block_mask.shape[-2], block_mask.shape[-1]
    if q_len > mask_q or kv_len > mask_kv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={q_len} and kv_len={kv_len}. As the block mask was created for a smaller "
            "length than you're using it for, you likely need to create a new block mask.")
    if (q_len < mask_q and kv_len <= mask_kv) or (q_len <= mask_q and kv_len < mask_kv):
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={q_len} and kv_len={kv_len}. As the block mask was created for a larger "
            "length than you're using it for, you can either 1. create a new block mask with "
            "the correct length, or 2. 'adjust' the existing block mask to the correct length "
            "by calling block_mask._adjust(q_len, kv_len). This essentially 'crops' the block "
            "mask to the upper left corner, which does not work for all mask_mods!")
