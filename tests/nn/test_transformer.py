"""MultiheadAttention and the transformer encoder against torch (float64, dropout off)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck
from tests.nn.nn_harness import module_parity, randn
from tests.parity.harness import both, error_of

pytest.importorskip("torch")


def _mha_call(nn_kwargs, inputs_fn, call_kwargs=None, self_attn=False):
    """A module that runs MultiheadAttention on its inputs (q, k, v) or (x,) for self-attention,
    and returns (output, weights)."""

    def make(lib):
        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = lib.nn.MultiheadAttention(**nn_kwargs)

            def forward(self, *xs):
                kw = dict(call_kwargs or {})
                for name, value in list(kw.items()):
                    if isinstance(value, np.ndarray):
                        kw[name] = lib.from_numpy(value.copy())
                        if kw[name].is_floating_point():
                            kw[name] = kw[name].to(xs[0].dtype)
                q, k, v = (xs[0],) * 3 if self_attn else xs
                return self.attn(q, k, v, **kw)

        return Wrap()

    return make, inputs_fn()


L, S, N, E = 3, 4, 2, 4

CASES = {
    "self_attn": (dict(embed_dim=E, num_heads=2), lambda: [randn(L, N, E)], None, True),
    "cross_attn": (dict(embed_dim=E, num_heads=2),
                   lambda: [randn(L, N, E), randn(S, N, E, seed=1), randn(S, N, E, seed=2)],
                   None, False),
    "batch_first": (dict(embed_dim=E, num_heads=4, batch_first=True),
                    lambda: [randn(N, L, E)], None, True),
    "unbatched": (dict(embed_dim=E, num_heads=2), lambda: [randn(L, E)], None, True),
    "no_weights": (dict(embed_dim=E, num_heads=2),
                   lambda: [randn(L, N, E), randn(S, N, E, seed=1), randn(S, N, E, seed=2)],
                   {"need_weights": False}, False),
    "per_head_weights": (dict(embed_dim=E, num_heads=2), lambda: [randn(L, N, E)],
                         {"average_attn_weights": False}, True),
    "bool_attn_mask": (dict(embed_dim=E, num_heads=2), lambda: [randn(L, N, E)],
                       {"attn_mask": np.triu(np.ones((L, L), bool), 1)}, True),
    "float_attn_mask_3d": (dict(embed_dim=E, num_heads=2), lambda: [randn(L, N, E)],
                           {"attn_mask": randn(N * 2, L, L, seed=5)}, True),
    "key_padding_mask": (dict(embed_dim=E, num_heads=2, batch_first=True),
                         lambda: [randn(N, S, E)],
                         {"key_padding_mask": np.array([[False] * S, [False, False, True, True]])},
                         True),
    "both_masks_no_weights": (dict(embed_dim=E, num_heads=2, batch_first=True),
                              lambda: [randn(N, L, E)],
                              {"key_padding_mask": np.array([[False, True, False],
                                                             [False, False, True]]),
                               "attn_mask": np.triu(np.ones((L, L), bool), 1),
                               "need_weights": False}, True),
    "causal": (dict(embed_dim=E, num_heads=2), lambda: [randn(L, N, E)],
               {"attn_mask": np.triu(np.ones((L, L), bool), 1), "is_causal": True,
                "need_weights": False}, True),
    "kdim_vdim": (dict(embed_dim=E, num_heads=2, kdim=3, vdim=5),
                  lambda: [randn(L, N, E), randn(S, N, 3, seed=1), randn(S, N, 5, seed=2)],
                  None, False),
    "no_bias": (dict(embed_dim=E, num_heads=2, bias=False), lambda: [randn(L, N, E)], None,
                True),
    "bias_kv_zero_attn": (dict(embed_dim=E, num_heads=2, add_bias_kv=True, add_zero_attn=True),
                          lambda: [randn(L, N, E)],
                          {"attn_mask": np.triu(np.ones((L, L), bool), 1)}, True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_multihead_attention_matches_torch(case):
    nn_kwargs, inputs_fn, call_kwargs, self_attn = CASES[case]
    make, inputs = _mha_call(nn_kwargs, inputs_fn, call_kwargs, self_attn)
    module_parity(make, inputs)


def test_multihead_attention_parameter_names_match_torch():
    def prog(lib):
        nn = lib.nn
        return [[(n, tuple(p.shape)) for n, p in m.named_parameters()]
                for m in (nn.MultiheadAttention(4, 2), nn.MultiheadAttention(4, 2, bias=False),
                          nn.MultiheadAttention(4, 1, kdim=2, vdim=3, add_bias_kv=True))] + \
            [list(nn.MultiheadAttention(4, 2).state_dict())]

    both(prog)


def test_multihead_attention_errors_match_torch():
    def prog(lib):
        nn = lib.nn
        m = nn.MultiheadAttention(4, 2)
        x = lib.zeros(3, 2, 4)
        return [error_of(nn.MultiheadAttention, 5, 2), error_of(nn.MultiheadAttention, 0, 2),
                error_of(m, x, x, x, attn_mask=lib.zeros(2, 2)),
                error_of(m, x, x, x, attn_mask=lib.zeros(3, 3, dtype=lib.int64)),
                error_of(m, x, x, x, is_causal=True),
                error_of(m, x, lib.zeros(3, 4), lib.zeros(3, 4)),
                error_of(m, lib.zeros(4), lib.zeros(4), lib.zeros(4)),
                error_of(m, x, x, x, key_padding_mask=lib.zeros(2, 5, dtype=lib.bool))]

    both(prog)


ENCODER = {
    "post_norm": dict(d_model=4, nhead=2, dim_feedforward=6, dropout=0.0),
    "pre_norm_gelu_batch_first": dict(d_model=4, nhead=2, dim_feedforward=6, dropout=0.0,
                                      norm_first=True, activation="gelu", batch_first=True),
    "module_activation_no_bias": dict(d_model=4, nhead=1, dim_feedforward=3, dropout=0.0,
                                      bias=False, layer_norm_eps=1e-3),
}


@pytest.mark.parametrize("case", list(ENCODER))
def test_encoder_layer_matches_torch(case):
    kwargs = dict(ENCODER[case])

    def make(lib):
        kw = dict(kwargs)
        if case == "module_activation_no_bias":
            kw["activation"] = lib.nn.SiLU()
        return lib.nn.TransformerEncoderLayer(**kw)

    module_parity(make, [randn(2, 3, 4)])
    # with a mask and a key padding mask, through a wrapper that converts them
    mask = np.triu(np.ones((3, 3), bool), 1)
    make_masked = _encoder_with_masks(make, mask, np.array([[False, False, True],
                                                             [False, False, False]]))
    module_parity(make_masked, [randn(2, 3, 4)] if kwargs.get("batch_first")
                  else [randn(3, 2, 4)])


def _encoder_with_masks(make_layer, attn_mask, padding_mask):
    def make(lib):
        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = make_layer(lib)

            def forward(self, x):
                return self.layer(x, src_mask=lib.from_numpy(attn_mask.copy()),
                                  src_key_padding_mask=lib.from_numpy(padding_mask.copy()))

        return Wrap()

    return make


def test_encoder_stack_matches_torch():
    def make(lib):
        layer = lib.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)
        return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(4),
                                         enable_nested_tensor=False)

    module_parity(make, [randn(2, 3, 4)])


def test_encoder_stack_repr_and_warning_match_torch():
    def prog(lib):
        with pytest.warns(UserWarning) as rec:
            enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(4, 2, 8), 2)
        return repr(enc), [str(w.message) for w in rec], list(enc.state_dict())

    both(prog)


def test_encoder_layer_in_train_mode_uses_dropout():
    retrograd.manual_seed(0)
    layer = retrograd.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.5)
    x = retrograd.randn(3, 2, 4)
    a, b = layer(x), layer(x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())


# --- decoder and the full Transformer ------------------------------------------------------------
DECODER = {
    "post_norm": dict(d_model=4, nhead=2, dim_feedforward=6, dropout=0.0),
    "pre_norm_gelu_batch_first": dict(d_model=4, nhead=2, dim_feedforward=6, dropout=0.0,
                                      norm_first=True, activation="gelu", batch_first=True),
    "callable_activation_no_bias": dict(d_model=4, nhead=1, dim_feedforward=3, dropout=0.0,
                                        bias=False, layer_norm_eps=1e-3),
}


def _with_masks(make_inner, masks, call):
    """A wrapper that passes NumPy masks (converted per library) as keyword arguments."""

    def make(lib):
        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = make_inner(lib)

            def forward(self, *xs):
                kw = {}
                for name, value in masks.items():
                    if isinstance(value, np.ndarray):
                        value = lib.from_numpy(value.copy())
                        if value.is_floating_point():
                            value = value.to(xs[0].dtype)
                    kw[name] = value
                return call(self.inner, *xs, **kw)

        return Wrap()

    return make


def _causal(n):
    return np.triu(np.full((n, n), -np.inf, np.float32), 1)


@pytest.mark.parametrize("case", list(DECODER))
def test_decoder_layer_matches_torch(case):
    kwargs = dict(DECODER[case])
    batch_first = kwargs.get("batch_first", False)

    def make(lib):
        kw = dict(kwargs)
        if case == "callable_activation_no_bias":
            kw["activation"] = lib.nn.functional.silu
        return lib.nn.TransformerDecoderLayer(**kw)

    tgt, mem = (randn(2, 3, 4), randn(2, 5, 4, seed=1)) if batch_first else (
        randn(3, 2, 4), randn(5, 2, 4, seed=1))
    module_parity(make, [tgt, mem])
    masks = {"tgt_mask": np.triu(np.ones((3, 3), bool), 1),
             "memory_mask": randn(3, 5, seed=3),
             "tgt_key_padding_mask": np.array([[False, False, True], [False, False, False]]),
             "memory_key_padding_mask": np.array([[False] * 4 + [True], [False] * 5])}
    module_parity(_with_masks(make, masks, lambda m, t, s, **kw: m(t, s, **kw)), [tgt, mem])
    causal = {"tgt_mask": _causal(3), "tgt_is_causal": True}
    module_parity(_with_masks(make, causal, lambda m, t, s, **kw: m(t, s, **kw)), [tgt, mem])
    module_parity(make, [randn(3, 4), randn(5, 4, seed=1)])  # unbatched


def test_decoder_stack_matches_torch():
    def make(lib):
        layer = lib.nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0, batch_first=True)
        return lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(4))

    module_parity(make, [randn(2, 3, 4), randn(2, 5, 4, seed=1)])
    masks = {"tgt_mask": _causal(3)}  # detected as causal
    module_parity(_with_masks(make, masks, lambda m, t, s, **kw: m(t, s, **kw)),
                  [randn(2, 3, 4), randn(2, 5, 4, seed=1)])


TRANSFORMER = {
    "default": dict(d_model=4, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                    dim_feedforward=6, dropout=0.0),
    "pre_norm_batch_first_gelu": dict(d_model=4, nhead=2, num_encoder_layers=1,
                                      num_decoder_layers=2, dim_feedforward=6, dropout=0.0,
                                      batch_first=True, norm_first=True, activation="gelu"),
}


@pytest.mark.parametrize("case", list(TRANSFORMER))
def test_transformer_matches_torch(case):
    kwargs = TRANSFORMER[case]
    batch_first = kwargs.get("batch_first", False)

    def make(lib):
        return lib.nn.Transformer(**kwargs)

    src, tgt = (randn(2, 5, 4), randn(2, 3, 4, seed=1)) if batch_first else (
        randn(5, 2, 4), randn(3, 2, 4, seed=1))
    module_parity(make, [src, tgt])
    masks = {"tgt_mask": _causal(3),
             "src_key_padding_mask": np.array([[False] * 4 + [True], [False] * 5]),
             "memory_key_padding_mask": np.array([[False] * 4 + [True], [False] * 5])}
    module_parity(_with_masks(make, masks, lambda m, s, t, **kw: m(s, t, **kw)), [src, tgt])


def test_transformer_names_mask_and_errors_match_torch():
    def prog(lib):
        nn = lib.nn
        m = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=6)
        names = [(k, tuple(v.shape)) for k, v in m.state_dict().items()]
        return [names, repr(m), nn.Transformer.generate_square_subsequent_mask(3),
                nn.Transformer.generate_square_subsequent_mask(2, dtype=lib.float64),
                error_of(m, lib.zeros(5, 2, 4), lib.zeros(3, 3, 4)),
                error_of(m, lib.zeros(5, 2, 4), lib.zeros(3, 2, 5)),
                error_of(nn.TransformerDecoderLayer, 4, 2, activation="tanh")]

    with pytest.warns(UserWarning):
        both(prog)


def test_transformer_init_is_xavier_on_matrices():
    retrograd.manual_seed(0)
    m = retrograd.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                 dim_feedforward=16)
    w = m.decoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6.0 / (8 + 16))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert (m.decoder.norm.weight.detach().numpy() == 1).all()


def test_transformer_gradcheck():
    retrograd.manual_seed(0)
    m = retrograd.nn.Transformer(d_model=2, nhead=1, num_encoder_layers=1, num_decoder_layers=1,
                                 dim_feedforward=2, dropout=0.0).double()
    src = retrograd.randn(3, 1, 2, dtype=retrograd.float64, requires_grad=True)
    tgt = retrograd.randn(2, 1, 2, dtype=retrograd.float64, requires_grad=True)
    mask = retrograd.nn.Transformer.generate_square_subsequent_mask(2, dtype=retrograd.float64)
    params = [p for n, p in m.named_parameters() if "decoder.layers.0" in n]
    assert gradcheck(lambda s, t, *ws: m(s, t, tgt_mask=mask), (src, tgt, *params))


def _causal_mask(lib, n):
    return lib.nn.Transformer.generate_square_subsequent_mask(n).double()


_KPM = np.array([[False, False, True], [False, False, False]])
ENCODER_STACK_CALLS = {
    "causal_hint": (dict(), lambda lib, m, x: m(x, mask=_causal_mask(lib, 3), is_causal=True),
                    (3, 2, 4)),
    "causal_detected_with_padding": (
        dict(batch_first=True),
        lambda lib, m, x: m(x, mask=_causal_mask(lib, 3),
                            src_key_padding_mask=lib.from_numpy(_KPM.copy())), (2, 3, 4)),
    "unbatched_pre_norm": (dict(norm_first=True),
                           lambda lib, m, x: m(x, mask=_causal_mask(lib, 3)), (3, 4)),
    "bool_mask_gelu": (dict(activation="gelu"),
                       lambda lib, m, x: m(x, mask=lib.from_numpy(np.triu(np.ones((3, 3), bool),
                                                                          1)),
                                           src_key_padding_mask=lib.from_numpy(_KPM.copy())),
                       (3, 2, 4)),
    "lambda_activation": (dict(activation="tanh_lambda"), lambda lib, m, x: m(x), (3, 2, 4)),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", list(ENCODER_STACK_CALLS))
def test_encoder_stack_masks_and_options_match_torch(case):
    kwargs, call, shape = ENCODER_STACK_CALLS[case]

    def make(lib):
        kw = dict(kwargs)
        if kw.get("activation") == "tanh_lambda":
            kw["activation"] = lambda t: lib.tanh(t)
        layer = lib.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, **kw)

        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = lib.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

            def forward(self, x):
                return call(lib, self.encoder, x)

        return Wrap()

    module_parity(make, [randn(*shape)])
