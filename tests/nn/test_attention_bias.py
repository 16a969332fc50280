"""nn.attention.bias (CausalBias, causal_upper_left, causal_lower_right) against torch's:
the masks, scaled_dot_product_attention under them (values and gradients), warnings, errors."""

import warnings

import numpy as np
import pytest

import retrograd
from tests.parity.harness import error_of, torch_or_skip


def _attend(lib, make, L, S, **kw):
    bias_mod = __import__(f"{lib.__name__}.nn.attention.bias", fromlist=["bias"])
    rng = np.random.default_rng(L * 10 + S)
    q = lib.tensor(rng.standard_normal((2, 3, L, 8)), requires_grad=True)
    k = lib.tensor(rng.standard_normal((2, 3, S, 8)), requires_grad=True)
    v = lib.tensor(rng.standard_normal((2, 3, S, 4)), requires_grad=True)
    bias = getattr(bias_mod, make)(L, S)
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias, **kw)
    out.sum().backward()
    return [out.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy(),
            bias._materialize().numpy(), repr(bias), isinstance(bias, lib.Tensor),
            int(bias.variant), bias.seq_len_q, bias.seq_len_kv]


@pytest.mark.parametrize("make", ["causal_upper_left", "causal_lower_right"])
@pytest.mark.parametrize("L, S", [(3, 5), (4, 4), (1, 6)])
def test_sdpa_under_causal_bias_matches_torch(make, L, S):
    torch = torch_or_skip()
    ours, theirs = _attend(retrograd, make, L, S), _attend(torch, make, L, S, scale=None)
    for a, b in zip(ours[:5], theirs[:5]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert ours[5:] == [r.replace("torch.", "retrograd.") if isinstance(r, str) else r
                        for r in theirs[5:]]


def test_causal_bias_errors_and_warning_like_torch():
    torch = torch_or_skip()
    out = []
    for lib in (retrograd, torch):
        bias = __import__(f"{lib.__name__}.nn.attention.bias", fromlist=["bias"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bias.causal_lower_right(5, 3)
        q = lib.ones(1, 1, 2, 4)
        out.append([
            [str(w.message) for w in caught],
            error_of(bias.causal_upper_left, 2, 3, 4),
            error_of(bias.causal_lower_right, 2),
            error_of(bias.CausalBias, 1, 2, 2),
            error_of(lib.nn.functional.scaled_dot_product_attention, q, q, q,
                     attn_mask=bias.causal_upper_left(2, 2), is_causal=True),
            sorted(bias.__all__),
            [m.name for m in bias.CausalVariant],
        ])
    assert out[0] == out[1]
