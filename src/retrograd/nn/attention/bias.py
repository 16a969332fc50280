"""torch.nn.attention.bias: causal attention masks that scaled_dot_product_attention treats
as what they mean (an upper-left causal mask becomes is_causal=True).

A CausalBias is a tensor holding its materialized boolean mask (seq_len_q x seq_len_kv), so it
prints, indexes and converts as that mask. torch's is a tensor subclass whose own data is
unused; retrograd's shape is the mask's."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd._ops.torch_function import disabled_torch_function_impl
from retrograd._tensor import Tensor

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """UPPER_LEFT: query i sees keys 0..i; LOWER_RIGHT: the triangle aligned to the last key."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


def _mask(variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> Tensor:
    ones = retrograd.ones(seq_len_q, seq_len_kv, dtype=retrograd.bool)
    offset = 0 if variant == CausalVariant.UPPER_LEFT else seq_len_kv - seq_len_q
    return retrograd.tril(ones, diagonal=offset)


class CausalBias(Tensor):
    """A causal mask for scaled_dot_product_attention; make one with causal_upper_left or
    causal_lower_right."""

    # attention reads the variant itself; other ops see the mask as a plain tensor
    __torch_function__ = disabled_torch_function_impl

    def __new__(cls, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> CausalBias:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        return Tensor._make_subclass(cls, _mask(variant, seq_len_q, seq_len_kv))

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            _ws.warn("Lower right causal bias will produce NaNs in the output when "
                     "seq_len_q > seq_len_kv!", stacklevel=2)

    def _upper_left(self, device: Any = None) -> Tensor:
        return _mask(CausalVariant.UPPER_LEFT, self.seq_len_q, self.seq_len_kv)

    def _lower_right(self, device: Any = None) -> Tensor:
        return _mask(CausalVariant.LOWER_RIGHT, self.seq_len_q, self.seq_len_kv)

    def _materialize(self, device: Any = None) -> Tensor:
        """The boolean mask (True: the key takes part), a plain tensor."""
        if device is not None:
            retrograd.device(device)  # other devices than the CPU are refused
        return _mask(self.variant, self.seq_len_q, self.seq_len_kv)

    @staticmethod
    def _dispatch(query: Tensor, key: Tensor, value: Tensor, attn_mask: CausalBias,
                  dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                  enable_gqa: bool = False) -> Tensor:
        """scaled_dot_product_attention under this mask: is_causal where the mask is the
        upper-left triangle, the materialized mask otherwise (as torch's CPU path)."""
        sdpa = retrograd.nn.functional.scaled_dot_product_attention
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or \
                attn_mask.variant == CausalVariant.UPPER_LEFT:
            return sdpa(query, key, value, attn_mask=None, dropout_p=dropout_p, is_causal=True,
                        scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            return sdpa(query, key, value, attn_mask=attn_mask._materialize(),
                        dropout_p=dropout_p, is_causal=False, scale=scale,
                        enable_gqa=enable_gqa)
        raise ValueError("CausalBias.variant must be a CausalVariant type, but found: "
                         f"{attn_mask.variant}")

    # what scaled_dot_product_attention calls when this is its attn_mask
    _sdpa_handler = _dispatch

    def __repr__(self) -> str:  # type: ignore[override]  # (the mask's repr)
        return repr(self._materialize())


def causal_upper_left(*size: int) -> CausalBias:
    """The upper-left causal mask of size (seq_len_q, seq_len_kv): is_causal=True's."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size: int) -> CausalBias:
    """The lower-right causal mask of size (seq_len_q, seq_len_kv): the last query sees every
    key (decoding with a cache of earlier keys)."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
