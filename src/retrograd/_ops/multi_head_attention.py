"""F.multi_head_attention_forward: multi-head attention over (L, N, E) query and (S, N, E)
key / value (or unbatched (L, E), (S, E)), with torch's parameters, masks, checks and shapes.

With need_weights=True the weights are computed explicitly (softmax of the scaled scores);
otherwise through F.scaled_dot_product_attention. nn.MultiheadAttention calls it; the mask
helpers (_canonical_mask, _none_or_dtype) are shared with the transformer layers.
"""

from __future__ import annotations

import math
from typing import Any

from retrograd import _warning_site as _ws
from retrograd._ops.registry import _FUNCTIONAL, register_functional
from retrograd._tensor import Tensor


def _size(shape: Any) -> str:
    return f"torch.Size({list(shape)})"  # torch's messages print its Size


def _f(name: str) -> Any:
    """An nn.functional function (all registered by the time attention runs)."""
    return _FUNCTIONAL[name]


# --- masks ---------------------------------------------------------------------------------------
def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """Bool masks become additive float masks (-inf where True); float masks pass through."""
    import retrograd  # (the namespace: deferred, ops sit below it)

    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != retrograd.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        _ws.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                 "same type for both instead.", stacklevel=3)
    if not is_float:
        mask = retrograd.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(t: Tensor | None) -> Any:
    return None if t is None else t.dtype


# --- checks -------------------------------------------------------------------------------------
def _check_shapes(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                  attn_mask: Tensor | None, num_heads: int) -> bool:
    """Validate dims as torch does; returns whether the input is batched."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D "
                                 f"but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     "instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{_size(attn_mask.shape)}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _check_mask_shape(attn_mask: Tensor, tgt_len: int, src_len: int, batch_heads: int) -> Tensor:
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask.shape)}, but "
                               f"should be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() != 3:
        raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if tuple(attn_mask.shape) != (batch_heads, tgt_len, src_len):
        raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, but "
                           f"should be {(batch_heads, tgt_len, src_len)}.")
    return attn_mask


def _check_key_padding_mask(mask: Tensor, src_len: int, bsz: int) -> None:
    if mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{mask.shape[0]}")
    if mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{mask.shape[1]}")


def _attention_with_weights(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None,
                            dropout_p: float) -> tuple[Tensor, Tensor]:
    """softmax(q k^T / sqrt(d) + mask) v, also returning the softmax (batch*heads, L, S)."""
    import retrograd  # (the namespace: deferred, ops sit below it)

    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    if attn_mask is not None:
        scores = retrograd.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        scores = retrograd.bmm(q_scaled, k.transpose(-2, -1))
    weights = _f("softmax")(scores, dim=-1)
    if dropout_p > 0.0:
        weights = _f("dropout")(weights, p=dropout_p)
    return retrograd.bmm(weights, v), weights


def _attention_fused(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, dropout_p: float,
                     is_causal: bool, bsz: int, heads: int) -> Tensor:
    """scaled_dot_product_attention on (batch, heads, seq, head_dim); returns (b*h, L, d)."""
    tgt_len, src_len, head_dim = q.shape[1], k.shape[1], q.shape[2]
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, heads, attn_mask.shape[-2], src_len)
    out = _f("scaled_dot_product_attention")(q.view(bsz, heads, tgt_len, head_dim),
                                         k.view(bsz, heads, src_len, head_dim),
                                         v.view(bsz, heads, src_len, head_dim), attn_mask,
                                         dropout_p, is_causal)
    return out.view(bsz * heads, tgt_len, head_dim)




def _in_projection(query: Tensor, key: Tensor, value: Tensor, w_q: Tensor, w_k: Tensor,
                   w_v: Tensor, bias: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    b_q, b_k, b_v = (None, None, None) if bias is None else bias.chunk(3)
    linear = _f("linear")
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _check_static(static: Tensor, name: str, batch_heads: int, head_dim: int) -> Tensor:
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got "
                             f"{static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """(attn_output, attn_output_weights): weights averaged over heads unless
    average_attn_weights=False, None when need_weights=False."""
    import retrograd  # (the namespace: deferred, ops sit below it)

    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        # separate projections let key and value have their own embedding sizes
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {_size(key.shape[:2])} do not "
                                 f"match value's {_size(value.shape[:2])}")
        if q_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight is None")
        if k_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but k_proj_weight is None")
        if v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but v_proj_weight is None")
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, in_proj_bias)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {_size(key.shape)} does not match value shape "
                                 f"{_size(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight.chunk(3)
        q, k, v = _in_projection(query, key, value, w_q, w_k, w_v, in_proj_bias)
    if attn_mask is not None:
        attn_mask = _check_mask_shape(attn_mask, tgt_len, src_len, bsz * num_heads)
    pad = _f("pad")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = retrograd.cat([k, bias_k.repeat(1, bsz, 1)])
        v = retrograd.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    # (seq, batch, embed) -> (batch * heads, seq, head_dim)
    heads = num_heads
    q = q.view(tgt_len, bsz * heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * heads, head_dim).transpose(0, 1)
    else:
        k = _check_static(static_k, "static_k", bsz * heads, head_dim)
    if static_v is None:
        v = v.view(v.shape[0], bsz * heads, head_dim).transpose(0, 1)
    else:
        v = _check_static(static_v, "static_v", bsz * heads, head_dim)
    if add_zero_attn:
        k = retrograd.cat([k, retrograd.zeros((bsz * heads, 1, head_dim), dtype=k.dtype)], dim=1)
        v = retrograd.cat([v, retrograd.zeros((bsz * heads, 1, head_dim), dtype=v.dtype)], dim=1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        _check_key_padding_mask(key_padding_mask, src_len, bsz)
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, heads, -1, -1)
        kpm = kpm.reshape(bsz * heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    weights: Tensor | None
    if need_weights:
        out, weights = _attention_with_weights(q, k, v, attn_mask, dropout_p)
        weights = weights.view(bsz, heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    else:
        out = _attention_fused(q, k, v, attn_mask, dropout_p, is_causal, bsz, heads)
        weights = None
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = _f("linear")(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[-1])
    if not batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


register_functional("multi_head_attention_forward", multi_head_attention_forward)
register_functional("_canonical_mask", _canonical_mask)
register_functional("_none_or_dtype", _none_or_dtype)
