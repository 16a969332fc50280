"""NumPy kernels of scaled_dot_product_attention's fused path: scores with masks, row softmax, the
forward and backward. retrograd._ops.attention declares the ops. No Tensor here: plain arrays
and Python numbers.
"""

from __future__ import annotations

import math

import numpy as np


def _bool_to_float_mask(mask: np.ndarray, dtype) -> np.ndarray:
    out = np.zeros(mask.shape, dtype)
    out[~mask] = -np.inf
    return out


def _attention_scores(q, k, mask, is_causal, scale):
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * q.dtype.type(scale)
    if mask is not None:
        s = s + mask
    if is_causal:
        lq, lk = s.shape[-2], s.shape[-1]
        s = np.where(np.tril(np.ones((lq, lk), bool)), s, -np.inf)
    return s


def _softmax_rows(s):
    """(probabilities, logsumexp); rows with every score -inf give zeros, as torch's kernel."""
    m = s.max(axis=-1, keepdims=True)
    dead = np.isneginf(m)
    m = np.where(dead, 0, m)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(dead, 0, e / np.where(dead, 1, total))
        lse = np.where(dead, -np.inf, m + np.log(total))
    return p.astype(s.dtype, copy=False), lse[..., 0]


def _expand_heads(k: np.ndarray, heads: int) -> np.ndarray:
    """Grouped-query attention: repeat key/value heads to the query's head count."""
    return k if k.shape[1] == heads else np.repeat(k, heads // k.shape[1], axis=1)


def _scale_of(q_shape: tuple, scale) -> float:
    if scale is not None:
        return scale
    # an empty head dim divides by zero: inf, as torch's C++ gives (the output is empty anyway)
    return 1.0 / math.sqrt(q_shape[-1]) if q_shape[-1] else math.inf


def _flash_forward(q, k, v, dropout_p, is_causal, attn_mask, scale):
    heads = q.shape[1]
    k, v = _expand_heads(k, heads), _expand_heads(v, heads)
    s = _attention_scores(q, k, attn_mask, is_causal, _scale_of(q.shape, scale))
    p, lse = _softmax_rows(s)
    out = np.empty_like(q)  # torch's kernel lays the output out like the query
    out[...] = np.matmul(p, v)
    acc = np.float64 if q.dtype == np.float64 else np.float32
    lse_out = np.empty((q.shape[0], q.shape[2], heads), acc).transpose(0, 2, 1)
    lse_out[...] = lse
    return out, lse_out


def _flash_backward_forward(g, q, k, v, out, logsumexp, dropout_p, is_causal, attn_mask,
                            scale):
    """Fused backward: P from the saved logsumexp, then dV = P^T dO, dS = P (dP - rowsum(dP P))."""
    heads = q.shape[1]
    groups = heads // k.shape[1]
    ke, ve = _expand_heads(k, heads), _expand_heads(v, heads)
    sc = _scale_of(q.shape, scale)
    s = _attention_scores(q, ke, attn_mask, is_causal, sc)
    lse = logsumexp[..., None]
    with np.errstate(invalid="ignore"):
        p = np.where(np.isneginf(lse), 0, np.exp(s - lse)).astype(q.dtype, copy=False)
    dv = np.matmul(np.swapaxes(p, -1, -2), g)
    dp = np.matmul(g, np.swapaxes(ve, -1, -2))
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * q.dtype.type(sc)
    dq = np.matmul(ds, ke)
    dk = np.matmul(np.swapaxes(ds, -1, -2), q)
    if groups > 1:  # sum the repeated heads back onto the shared key / value heads
        dk = dk.reshape(dk.shape[0], -1, groups, *dk.shape[2:]).sum(axis=2)
        dv = dv.reshape(dv.shape[0], -1, groups, *dv.shape[2:]).sum(axis=2)
    return tuple(np.ascontiguousarray(a) for a in (dq, dk, dv))
