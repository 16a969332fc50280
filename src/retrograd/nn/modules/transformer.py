"""MultiheadAttention, TransformerEncoderLayer and TransformerEncoder.

MultiheadAttention runs F.multi_head_attention_forward (retrograd/_ops/multi_head_attention.py)
with its parameters, as torch's does (no fused fast path).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd import nn
from retrograd._ops.multi_head_attention import _canonical_mask, _none_or_dtype
from retrograd._tensor import Tensor
from retrograd.nn.init import constant_, xavier_normal_, xavier_uniform_
from retrograd.nn.modules._elsewhere import elsewhere
from retrograd.nn.modules.activation import GELU, ReLU
from retrograd.nn.modules.container import ModuleList
from retrograd.nn.modules.dropout import Dropout
from retrograd.nn.modules.linear import Linear, NonDynamicallyQuantizableLinear
from retrograd.nn.modules.module import Module
from retrograd.nn.modules.normalization import LayerNorm
from retrograd.nn.parameter import Parameter

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder"]

F = nn.functional


# --- masks ---------------------------------------------------------------------------------------
def _generate_square_subsequent_mask(size: int, dtype: Any = None) -> Tensor:
    """The causal mask: -inf above the diagonal, 0 elsewhere."""
    return retrograd.triu(retrograd.full((size, size), float("-inf"), dtype=dtype), diagonal=1)


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None,
                           size: int | None = None) -> bool:
    """is_causal if given; else whether `mask` equals the causal mask of its size."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.size(-2)
    causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
    return mask.size() == causal.size() and bool((mask == causal).all())


class MultiheadAttention(Module):
    """Multi-head attention with torch's parameters: in_proj_weight (3E, E) and in_proj_bias
    (or q/k/v_proj_weight when kdim/vdim differ from embed_dim) and out_proj."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim="
                             f"{embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def param(*shape: int) -> Parameter:
            return Parameter(retrograd.empty(shape, device=device, dtype=dtype))

        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = param(1, 1, embed_dim)
            self.bias_v = param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            xavier_uniform_(self.in_proj_weight)
        else:
            xavier_uniform_(self.q_proj_weight)
            xavier_uniform_(self.k_proj_weight)
            xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            xavier_normal_(self.bias_v)

    def __setstate__(self, state: dict) -> None:
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """(attn_output, attn_weights): weights averaged over heads unless
        average_attn_weights=False, None when need_weights=False."""
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        batch_first = self.batch_first and query.dim() == 3
        if batch_first:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        return (out.transpose(1, 0), weights) if batch_first else (out, weights)

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """One (batch, heads, L, L) mask from attn_mask and key_padding_mask, and its type."""
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            bsz, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(bsz, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(bsz, self.num_heads, -1,
                                                                       -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(bsz, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type


# --- transformer encoder -------------------------------------------------------------------------
def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with residual, dropout and LayerNorm
    (post-norm, or pre-norm when norm_first=True)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _why_no_nested_tensor(layer: Any) -> str:
    """torch's reason for not using its nested-tensor fast path ('' if it would)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    checks = [
        (layer.norm_first, f"{name}.norm_first was True"),
        (not attn.batch_first, f"{name}.self_attn.batch_first was not True(use batch_first for "
                               "better inference performance)"),
        (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not True"),
        (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (layer.norm1.eps != layer.norm2.eps,
         f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
        (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    ]
    return next((why for failed, why in checks if failed), "")


class TransformerEncoder(Module):
    """`num_layers` deep copies of `encoder_layer`, then an optional final norm."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why:
            _ws.warn("enable_nested_tensor is True, but self.use_nested_tensor is False "
                     f"because {why}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first
        seq_len = src.size(0) if src.dim() == 2 else src.size(1 if batch_first else 0)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal,
                           src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output



# torch's module path for these names, whose classes live in other files
_HOMES = {"Transformer": "transformer_decoder", "TransformerDecoder": "transformer_decoder",
          "TransformerDecoderLayer": "transformer_decoder"}
__getattr__ = elsewhere(__name__, _HOMES)
__all__ += [name for name in _HOMES if not name.startswith("_")]
