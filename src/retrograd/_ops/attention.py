"""scaled_dot_product_attention: a fused (flash) op where torch takes one, the composite math
path otherwise.

The NumPy kernels the declarations run are in kernels/attention.py.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._config import _sdp
from retrograd._ops import dispatch
from retrograd._ops.dropout import dropout
from retrograd._ops.kernels.attention import (
    _bool_to_float_mask,
    _flash_backward_forward,
    _flash_forward,
    _scale_of,
)
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor, _wrap

# --- scaled_dot_product_attention ------------------------------------------------------------


_flash_backward = op(
    "_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, "
    "Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, "
    "Tensor? attn_mask=None, float? scale=None) -> (Tensor grad_query, Tensor grad_key, "
    "Tensor grad_value)", _flash_backward_forward, function=False, method=False)


def _flash_grads(grad, query, key, value, output, logsumexp, dropout_p, is_causal, attn_mask,
                 scale, output_mask):
    from retrograd._ops.normalization import _fused_wanted

    if _fused_wanted():
        return _flash_backward(grad, query, key, value, output, logsumexp, dropout_p,
                               is_causal, attn_mask=attn_mask, scale=scale)
    return _attention_grads_composite(grad, query, key, value, is_causal, attn_mask, scale,
                                      output_mask)


def _attention_grads_composite(grad, q, k, v, is_causal, attn_mask, scale, mask):
    """The same backward with retrograd ops, for gradients that must be differentiable."""
    from retrograd import matmul

    heads = q.shape[1]
    groups = heads // k.shape[1]
    ke = k if groups == 1 else _repeat_heads(k, groups)
    ve = v if groups == 1 else _repeat_heads(v, groups)
    sc = _scale_of(tuple(q.shape), scale)
    p = _masked_softmax(matmul(q, ke.transpose(-2, -1)) * sc, attn_mask, is_causal)
    dp = matmul(grad, ve.transpose(-2, -1))
    ds = p * (dp - (dp * p).sum(-1, True)) * sc
    dq = matmul(ds, ke) if mask[0] else None
    dk = matmul(ds.transpose(-2, -1), q) if mask[1] else None
    dv = matmul(p.transpose(-2, -1), grad) if mask[2] else None
    if groups > 1:
        dk = None if dk is None else _fold_heads(dk, groups)
        dv = None if dv is None else _fold_heads(dv, groups)
    return dq, dk, dv


def _repeat_heads(t: Tensor, groups: int) -> Tensor:
    b, h, length, d = t.shape
    return t.unsqueeze(2).expand(b, h, groups, length, d).reshape(b, h * groups, length, d)


def _fold_heads(t: Tensor, groups: int) -> Tensor:
    b, h, length, d = t.shape
    return t.reshape(b, h // groups, groups, length, d).sum(2)


def _masked_softmax(s: Tensor, attn_mask, is_causal: bool) -> Tensor:
    """Softmax over the last dim of s + mask; fully masked rows give zeros."""
    if s._data.size == 0:  # an empty batch or sequence: nothing to normalize
        return s * 0
    additive = np.zeros((), s._data.dtype)
    if attn_mask is not None:
        additive = additive + attn_mask._data
    if is_causal:
        lq, lk = s.shape[-2], s.shape[-1]
        additive = additive + np.where(np.tril(np.ones((lq, lk), bool)), 0, -np.inf)
    raw = s._data
    additive = np.asarray(additive, raw.dtype)
    sd = raw + additive
    m = sd.max(axis=-1, keepdims=True)
    alive = ~np.isneginf(m)
    keep = ~np.isneginf(sd)
    # exp(s + mask - max) where kept; masked entries get exp(0) * 0, never inf * 0
    with np.errstate(invalid="ignore"):
        shift = np.where(keep, np.where(alive, m, 0) - additive, raw)
    e = (s - _wrap(shift.astype(raw.dtype))).exp() * _wrap(keep.astype(raw.dtype))
    total = e.sum(-1, True) + _wrap((~alive).astype(raw.dtype))
    return e / total


_flash = op(
    "_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, "
    "float dropout_p=0.0, bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) "
    "-> (Tensor output, Tensor logsumexp)", _flash_forward,
    grads={"query, key, value": _flash_grads}, differentiable_outputs=(True, False),
    method=False)


def _flash_ok(q: Tensor, k: Tensor, v: Tensor, mask, dropout_p: float, enable_gqa: bool) -> bool:
    """torch's CPU flash-attention constraints; otherwise it takes the composite math path."""
    if dropout_p > 0.0 or q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    if not (q.shape[-1] == k.shape[-1] == v.shape[-1]):
        return False
    if q.shape[0] != k.shape[0] or k.shape[0] != v.shape[0] or k.shape[1] != v.shape[1]:
        return False
    if q.shape[1] != k.shape[1] and not (enable_gqa and q.shape[1] % k.shape[1] == 0):
        return False
    if q.shape[2] == 0 or k.shape[2] == 0:
        return False
    if any(t.stride()[-1] != 1 for t in (q, k, v)):
        return False
    # the fused kernel has no gradient for the mask: a mask that requires grad takes math
    return mask is None or (mask.ndim in (2, 4) and not mask.requires_grad)


def _check_sdpa(q: Tensor, k: Tensor, v: Tensor, mask) -> None:
    if not (q.dtype == k.dtype == v.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cname(q)} key.dtype: {_cname(k)} and value.dtype: {_cname(v)} instead.")
    if mask is not None and mask.dtype.name != "bool" and mask.dtype != q.dtype:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_cname(mask)} and  query.dtype: {_cname(q)} instead.")


def _cname(t: Tensor) -> str:
    from retrograd._ops.kernels.random import _C_NAMES

    return _C_NAMES.get(t.dtype.name, t.dtype.name)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Tensor:
    if attn_mask is not None and attn_mask.__class__ is not Tensor:
        # a mask class with its own meaning (nn.attention.bias.CausalBias) computes it
        handler = getattr(attn_mask.__class__, "_sdpa_handler", None)
        if handler is not None:
            return handler(query, key, value, attn_mask, dropout_p, is_causal, scale,
                           enable_gqa)
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        query, key, value, attn_mask = dispatch.autocast.cast("lower", query, key, value, attn_mask)
    _check_sdpa(query, key, value, attn_mask)
    float_mask = attn_mask
    if attn_mask is not None and attn_mask.dtype.name == "bool":
        float_mask = _wrap(_bool_to_float_mask(attn_mask._data, query._data.dtype))
    flash_on, math_on = _sdp["flash"], _sdp["math"]  # (nn.attention.sdpa_kernel sets them)
    if not flash_on and not math_on:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
    if flash_on and _flash_ok(query, key, value, float_mask, dropout_p, enable_gqa):
        return _flash(query, key, value, dropout_p, is_causal, attn_mask=float_mask,
                      scale=scale)[0]
    if not math_on:
        _ws.warn("Flash attention kernel not used because:", UserWarning, stacklevel=2)
        if dropout_p > 0.0:
            _ws.warn("Both fused kernels do not support non-zero dropout.", UserWarning,
                     stacklevel=2)
        raise RuntimeError("No available kernel.  Aborting execution.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    return _attention_math(query, key, value, float_mask, dropout_p, is_causal, scale,
                           enable_gqa)


def _attention_math(q: Tensor, k: Tensor, v: Tensor, mask, dropout_p: float, is_causal: bool,
                    scale, enable_gqa: bool) -> Tensor:
    """torch's _scaled_dot_product_attention_math: sqrt(scale) on q and k, safe softmax."""
    from retrograd import matmul

    sc = _scale_of(tuple(q.shape), None if scale is None else abs(scale))
    root = math.sqrt(sc)
    q = q * (-root if scale is not None and scale < 0 else root)
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        k = _repeat_heads(k, q.shape[-3] // k.shape[-3])
        v = _repeat_heads(v, q.shape[-3] // v.shape[-3])
    attn = matmul(q, k.transpose(-2, -1) * root)
    if mask is not None and mask.requires_grad:
        # _masked_softmax reads the mask's values; a term equal to zero carries its gradient
        # (that of the scores), left out where the mask is infinite (x - x is nan there)
        from retrograd._ops.pointwise import where

        carry = where(mask.detach().isfinite(), mask - mask.detach(), 0.0)
        attn = attn + carry
    attn = _masked_softmax(attn, mask, is_causal)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return matmul(attn, v)


register_functional("scaled_dot_product_attention", scaled_dot_product_attention)
