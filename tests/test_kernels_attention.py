"""The fused attention kernels on plain arrays, against torch's scaled_dot_product_attention."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import attention as K

RNG = np.random.default_rng(9)


@pytest.mark.parametrize("is_causal, masked, kv_heads", [
    (False, False, 4), (True, False, 4), (False, True, 4), (False, False, 2),
])
def test_forward_and_backward_match_torch(is_causal, masked, kv_heads):
    q = RNG.standard_normal((2, 4, 5, 3))
    k, v = RNG.standard_normal((2, kv_heads, 6, 3)), RNG.standard_normal((2, kv_heads, 6, 3))
    mask = RNG.random((5, 6)) > 0.3 if masked else None
    if mask is not None:
        mask[:, 0] = True  # no fully masked row
    additive = None if mask is None else K._bool_to_float_mask(mask, q.dtype)
    out, lse = K._flash_forward(q, k, v, 0.0, is_causal, additive, None)
    qt, kt, vt = (torch.from_numpy(a).requires_grad_() for a in (q, k, v))
    want = F.scaled_dot_product_attention(
        qt, kt, vt, None if mask is None else torch.from_numpy(mask), is_causal=is_causal,
        enable_gqa=kv_heads != 4)
    np.testing.assert_allclose(out, want.detach().numpy(), rtol=1e-10, atol=1e-12)
    scores = K._attention_scores(q, K._expand_heads(k, 4), additive, is_causal, K._scale_of(q.shape,
                                                                                        None))
    np.testing.assert_allclose(lse, np.log(np.exp(scores).sum(-1)), rtol=1e-10)
    g = RNG.standard_normal(out.shape)
    grads = K._flash_backward_forward(g, q, k, v, out, lse, 0.0, is_causal, additive,
                                      None)
    for got, ref in zip(grads, torch.autograd.grad(want, (qt, kt, vt), torch.from_numpy(g))):
        np.testing.assert_allclose(got, ref.numpy(), rtol=1e-9, atol=1e-12)


def test_bool_mask_becomes_additive():
    got = K._bool_to_float_mask(np.array([True, False]), np.float32)
    assert got.dtype == np.float32 and got.tolist() == [0.0, -np.inf]
    assert K._scale_of((1, 1, 2, 4), None) == 0.5
