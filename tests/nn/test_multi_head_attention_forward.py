"""F.multi_head_attention_forward against torch: outputs, weights and gradients for its options
(packed or separate projections, masks, bias_k / bias_v, add_zero_attn, static_k / static_v,
is_causal, unbatched input), and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.nn_functional_helpers import raises_like

torch = pytest.importorskip("torch")

E, H, L, S, N = 8, 2, 4, 5, 3
RNG = np.random.default_rng(11)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float64)


ARRAYS = {
    "query": _arr(L, N, E), "key": _arr(S, N, E), "value": _arr(S, N, E),
    "key6": _arr(S, N, 6), "value7": _arr(S, N, 7),
    "in_proj_weight": _arr(3 * E, E), "in_proj_bias": _arr(3 * E),
    "q_proj_weight": _arr(E, E), "k_proj_weight": _arr(E, 6), "v_proj_weight": _arr(E, 7),
    "bias_k": _arr(1, 1, E), "bias_v": _arr(1, 1, E),
    "out_proj_weight": _arr(E, E), "out_proj_bias": _arr(E),
    "static_k": _arr(N * H, S, E // H), "static_v": _arr(N * H, S, E // H),
    "attn_mask": _arr(L, S), "attn_mask3": _arr(N * H, L, S),
    "bool_mask": RNG.random((L, S)) < 0.3, "kpm": np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0],
                                                            [0, 1, 0, 0, 1]], dtype=bool),
    "causal": np.triu(np.full((L, L), -np.inf), 1),
}
FLOATS = {k for k, v in ARRAYS.items() if v.dtype.kind == "f"}


def _call(lib, spec: dict, grads: bool = True):
    t = {k: lib.from_numpy(v.copy()).requires_grad_(grads and k in FLOATS)
         for k, v in ARRAYS.items()}
    args = {k: (t[v] if isinstance(v, str) and v in t else v) for k, v in spec.items()}
    q, k, v = args.pop("q", t["query"]), args.pop("k", t["key"]), args.pop("v", t["value"])
    if args.pop("unbatched", False):
        q, k, v = q[:, 0], k[:, 0], v[:, 0]
        if "key_padding_mask" in args:
            args["key_padding_mask"] = args["key_padding_mask"][0]
    base = {"embed_dim_to_check": E, "num_heads": H, "in_proj_weight": t["in_proj_weight"],
            "in_proj_bias": t["in_proj_bias"], "bias_k": None, "bias_v": None,
            "add_zero_attn": False, "dropout_p": 0.0, "out_proj_weight": t["out_proj_weight"],
            "out_proj_bias": t["out_proj_bias"]}
    base.update(args)
    out, weights = lib.nn.functional.multi_head_attention_forward(q, k, v, **base)
    return out, weights, t


CASES = {
    "plain": {},
    "no_weights": {"need_weights": False},
    "per_head": {"average_attn_weights": False},
    "float_mask": {"attn_mask": "attn_mask"},
    "bool_mask_no_weights": {"attn_mask": "bool_mask", "need_weights": False},
    "mask3": {"attn_mask": "attn_mask3"},
    "mask3_no_weights": {"attn_mask": "attn_mask3", "need_weights": False},
    "kpm": {"key_padding_mask": "kpm"},
    "kpm_and_mask": {"key_padding_mask": "kpm", "attn_mask": "bool_mask"},
    "bias_kv": {"bias_k": "bias_k", "bias_v": "bias_v", "key_padding_mask": "kpm",
                "attn_mask": "attn_mask"},
    "zero_attn": {"add_zero_attn": True, "attn_mask": "attn_mask", "key_padding_mask": "kpm"},
    "separate": {"use_separate_proj_weight": True, "in_proj_weight": None,
                 "q_proj_weight": "q_proj_weight", "k_proj_weight": "k_proj_weight",
                 "v_proj_weight": "v_proj_weight", "k": "key6", "v": "value7"},
    "static": {"static_k": "static_k", "static_v": "static_v"},
    "causal": {"k": "query", "v": "query", "attn_mask": "causal", "is_causal": True,
               "need_weights": False},
    "causal_weights": {"k": "query", "v": "query", "attn_mask": "causal", "is_causal": True},
    "unbatched": {"unbatched": True, "attn_mask": "attn_mask", "key_padding_mask": "kpm"},
    "unbatched_no_weights": {"unbatched": True, "need_weights": False},
    "eval_dropout": {"dropout_p": 0.5, "training": False},
    "no_bias": {"in_proj_bias": None, "out_proj_bias": None},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_parity(case):
    res = []
    for lib in (retrograd, torch):
        out, weights, t = _call(lib, CASES[case])
        total = out.sum() + (0 if weights is None else (weights * weights).sum())
        total.backward()
        grads = {k: v.grad.numpy() for k, v in t.items() if v.grad is not None}
        res.append((out.detach().numpy(), None if weights is None else weights.detach().numpy(),
                    grads))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10, atol=1e-12)
    if res[1][1] is None:
        assert res[0][1] is None
    else:
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-12)
    assert sorted(res[0][2]) == sorted(res[1][2])
    for k in res[1][2]:
        np.testing.assert_allclose(res[0][2][k], res[1][2][k], rtol=1e-9, atol=1e-12)


ERRORS = {
    "embed_check": {"embed_dim_to_check": 6},
    "not_divisible": {"num_heads": 3},
    "bias_k_only": {"bias_k": "bias_k"},
    "bias_v_only": {"bias_v": "bias_v"},
    "static_with_bias": {"bias_k": "bias_k", "bias_v": "bias_v", "static_k": "static_k"},
    "static_v_with_bias": {"bias_k": "bias_k", "bias_v": "bias_v", "static_v": "static_v"},
    "static_size0": {"static_k": "attn_mask3"},
    "no_in_proj": {"in_proj_weight": None},
    "separate_missing": {"use_separate_proj_weight": True, "q_proj_weight": "q_proj_weight"},
    "key_value_shape": {"v": "key6"},
    "separate_seq_mismatch": {"use_separate_proj_weight": True, "v": "query",
                              "q_proj_weight": "q_proj_weight", "k_proj_weight": "q_proj_weight",
                              "v_proj_weight": "q_proj_weight"},
    "mask_shape": {"attn_mask": "causal"},
    "mask3_shape": {"attn_mask": "static_k"},
    "causal_no_mask": {"is_causal": True},
    "kpm_4d": {"key_padding_mask": "static_k"},
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    raises_like(lambda: _call(retrograd, ERRORS[case], grads=False),
                lambda: _call(torch, ERRORS[case], grads=False))


def test_module_uses_it():
    """nn.MultiheadAttention gives what the functional gives with its parameters."""
    retrograd.manual_seed(0)
    m = retrograd.nn.MultiheadAttention(E, H, kdim=6, vdim=7, bias=True, add_bias_kv=True)
    m.eval()
    q = retrograd.from_numpy(ARRAYS["query"].astype(np.float32))
    k = retrograd.from_numpy(ARRAYS["key6"].astype(np.float32))
    v = retrograd.from_numpy(ARRAYS["value7"].astype(np.float32))
    out, w = m(q, k, v)
    ref, ref_w = retrograd.nn.functional.multi_head_attention_forward(
        q, k, v, E, H, None, m.in_proj_bias, m.bias_k, m.bias_v, False, 0.0,
        m.out_proj.weight, m.out_proj.bias, training=False, use_separate_proj_weight=True,
        q_proj_weight=m.q_proj_weight, k_proj_weight=m.k_proj_weight,
        v_proj_weight=m.v_proj_weight)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    np.testing.assert_array_equal(w.detach().numpy(), ref_w.detach().numpy())
