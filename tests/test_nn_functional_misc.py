"""dropout, embedding, one_hot, pad and scaled_dot_product_attention beyond the op samples:
randomness and masks, error messages, in-place weight renormalization, layouts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from tests.nn_functional_helpers import pair, raises_like

torch = pytest.importorskip("torch")
TF = torch.nn.functional






# --- dropout ---------------------------------------------------------------------------------


def test_dropout_is_reproducible_and_scales_kept_values():
    x = retrograd.ones(200, 5, dtype=retrograd.float64, requires_grad=True)
    retrograd.manual_seed(3)
    a = F.dropout(x, 0.25)
    retrograd.manual_seed(3)
    b = F.dropout(x, 0.25)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    values = set(np.unique(a.detach().numpy()).tolist())
    assert values == {0.0, 1.0 / 0.75}
    kept = (a.detach().numpy() != 0).mean()
    assert 0.65 < kept < 0.85
    assert a.grad_fn.name() == "MulBackward0"


def test_dropout_backward_uses_the_forward_mask():
    x = retrograd.from_numpy(np.random.default_rng(0).uniform(1, 2, (6, 7))).requires_grad_()
    out = F.dropout(x, 0.5)
    F.dropout(x, 0.5)  # drawing again must not change the saved mask
    (g,) = retrograd.autograd.grad(out.sum(), x)
    np.testing.assert_allclose(g.numpy(), out.detach().numpy() / x.detach().numpy())


def test_dropout_identity_cases_return_the_input():
    x = retrograd.ones(2, 3, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert retrograd.dropout(x, 0.7, False) is x
    out = F.dropout(x, 1.0)
    assert out.grad_fn.name() == "MulBackward0" and not out.detach().numpy().any()


def test_dropout_inplace_and_errors():
    y = retrograd.ones(4, 4, requires_grad=True) * 1
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y and y.grad_fn.name() == "MulBackward0"
    raises_like(lambda: F.dropout(retrograd.ones(2), 1.5),
                lambda: TF.dropout(torch.ones(2), 1.5))
    raises_like(lambda: F.dropout1d(retrograd.ones(2, 2, 2, 2)),
                lambda: TF.dropout1d(torch.ones(2, 2, 2, 2)))


def test_feature_dropout_drops_whole_channels():
    x = retrograd.ones(4, 6, 5)
    out = F.dropout1d(x, 0.5).numpy()
    per_channel = out.reshape(4, 6, 5)
    assert all(len(set(ch.tolist())) == 1 for ch in per_channel.reshape(24, 5))
    out = F.dropout2d(retrograd.ones(3, 4, 2, 2), 0.5).numpy().reshape(12, 4)
    assert all(len(set(ch.tolist())) == 1 for ch in out)
    unbatched = F.dropout3d(retrograd.ones(3, 2, 2, 2), 0.5)
    assert tuple(unbatched.shape) == (3, 2, 2, 2)
    with pytest.warns(UserWarning, match="assuming that channel-wise 1D dropout"):
        F.dropout2d(retrograd.ones(2, 3, 4))


def test_alpha_dropout_keeps_mean_and_variance():
    x = retrograd.from_numpy(np.random.default_rng(8).standard_normal(40000))
    x.requires_grad_()
    assert F.alpha_dropout(x, 0.3) is x  # training defaults to False
    out = F.alpha_dropout(x, 0.3, training=True)
    assert out.grad_fn.name() == "AddBackward0"
    values = out.detach().numpy()
    assert abs(values.mean()) < 0.03 and abs(values.var() - 1) < 0.05
    # dropped entries all land on -alpha * a * (1 - p), a = ((alpha^2 p + 1)(1 - p))^-1/2
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha * alpha * 0.3 + 1) * 0.7)
    assert 0.25 < np.isclose(values, -alpha * a * 0.7).mean() < 0.35
    (g,) = retrograd.autograd.grad(out.sum(), x)
    assert set(np.unique(g.numpy()).round(12).tolist()) == {0.0, round(a, 12)}


def test_native_dropout_returns_bool_mask():
    x = retrograd.ones(50, dtype=retrograd.float64, requires_grad=True)
    out, mask = retrograd.native_dropout(x, 0.5, True)
    assert mask.dtype is retrograd.bool and out.grad_fn.name() == "NativeDropoutBackward0"
    np.testing.assert_array_equal(out.detach().numpy(), mask.numpy() * 2.0)
    (g,) = retrograd.autograd.grad(out.sum(), x)
    np.testing.assert_array_equal(g.numpy(), mask.numpy() * 2.0)
    out, mask = retrograd.native_dropout(x, 0.5, False)
    assert mask.numpy().all() and np.array_equal(out.detach().numpy(), x.detach().numpy())


# --- embedding -------------------------------------------------------------------------------


def test_embedding_padding_and_frequency_gradients_match_torch():
    w = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    idx = np.array([[1, 3, 1, 1], [4, 0, 2, 3]])
    for kw in ({"padding_idx": 1}, {"scale_grad_by_freq": True},
               {"padding_idx": -2, "scale_grad_by_freq": True}):
        wr, wt = pair(w, True)
        gout = np.random.default_rng(2).standard_normal((2, 4, 3)).astype(np.float32)
        F.embedding(retrograd.from_numpy(idx), wr, **kw).backward(retrograd.from_numpy(gout))
        TF.embedding(torch.from_numpy(idx), wt, **kw).backward(torch.from_numpy(gout))
        np.testing.assert_allclose(wr.grad.numpy(), wt.grad.numpy(), rtol=1e-6, atol=1e-7)
    wr, _ = pair(w, True)
    F.embedding(retrograd.from_numpy(idx), wr, padding_idx=1).sum().backward()
    assert not wr.grad.numpy()[1].any()


def test_embedding_dense_backward_is_differentiable():
    from retrograd._ops.embedding import embedding_dense_backward

    idx = retrograd.tensor([[2, 2], [0, 3]])
    g = retrograd.from_numpy(np.random.default_rng(3).standard_normal((2, 2, 3)))
    g.requires_grad_()
    for pad, freq in ((-1, False), (2, False), (-1, True), (0, True)):
        def f(g, pad=pad, freq=freq):
            return embedding_dense_backward(g, idx, 5, pad, freq)

        assert retrograd.autograd.gradcheck(f, (g,))
        assert retrograd.autograd.gradgradcheck(f, (g,))


def test_embedding_max_norm_renormalizes_weight_in_place():
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], np.float32)
    wr, wt = pair(w)
    idx = np.array([0, 1, 0])
    out_r = F.embedding(retrograd.from_numpy(idx), wr, max_norm=1.0)
    out_t = TF.embedding(torch.from_numpy(idx), wt, max_norm=1.0)
    np.testing.assert_allclose(out_r.numpy(), out_t.numpy(), rtol=1e-6)
    np.testing.assert_allclose(wr.numpy(), wt.numpy(), rtol=1e-6)
    assert wr.numpy()[2, 0] == 6.0  # rows not looked up are left alone


EMBEDDING_ERRORS = [
    lambda m: m.nn.functional.embedding(m.tensor([5]), m.ones(3, 2)),
    lambda m: m.nn.functional.embedding(m.tensor([-1]), m.ones(3, 2)),
    lambda m: m.nn.functional.embedding(m.tensor([1.0]), m.ones(3, 2)),
    lambda m: m.nn.functional.embedding(m.tensor([1]), m.ones(3, 2), padding_idx=5),
    lambda m: m.nn.functional.embedding(m.tensor([1]), m.ones(3, 2), padding_idx=-4),
]


@pytest.mark.parametrize("i", range(len(EMBEDDING_ERRORS)))
def test_embedding_errors_match_torch(i):
    raises_like(lambda: EMBEDDING_ERRORS[i](retrograd), lambda: EMBEDDING_ERRORS[i](torch))


# --- one_hot ---------------------------------------------------------------------------------


def test_one_hot_values_and_dtype():
    out = F.one_hot(retrograd.tensor([[2], [0]]))
    assert out.dtype is retrograd.int64 and tuple(out.shape) == (2, 1, 3)
    assert out.tolist() == [[[0, 0, 1]], [[1, 0, 0]]]
    assert tuple(F.one_hot(retrograd.zeros(0, dtype=retrograd.int64), 4).shape) == (0, 4)


ONE_HOT_ERRORS = [
    lambda m: m.nn.functional.one_hot(m.tensor([1.0, 2.0])),
    lambda m: m.nn.functional.one_hot(m.tensor([1, 2], dtype=m.int32)),
    lambda m: m.nn.functional.one_hot(m.tensor([1, -2])),
    lambda m: m.nn.functional.one_hot(m.tensor([1, 5]), 3),
    lambda m: m.nn.functional.one_hot(m.zeros(0, dtype=m.int64)),
]


@pytest.mark.parametrize("i", range(len(ONE_HOT_ERRORS)))
def test_one_hot_errors_match_torch(i):
    raises_like(lambda: ONE_HOT_ERRORS[i](retrograd), lambda: ONE_HOT_ERRORS[i](torch))


# --- pad -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(2, -1), (-1, 2), (-1, -1), (1, -2), (0, 0), (3, 0)])
def test_pad_cropping_matches_torch(mode, pad):
    x = np.arange(8.0).reshape(1, 2, 4)
    if mode == "reflect" and max(pad) >= 4:
        return
    np.testing.assert_array_equal(F.pad(retrograd.from_numpy(x), pad, mode=mode).numpy(),
                                  TF.pad(torch.from_numpy(x), pad, mode=mode).numpy())


def test_constant_pad_keeps_dtype_and_truncates_value():
    x = np.arange(6).reshape(2, 3)
    ours = F.pad(retrograd.from_numpy(x), (1, 1), value=2.7)
    theirs = TF.pad(torch.from_numpy(x), (1, 1), value=2.7)
    assert ours.dtype is retrograd.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


PAD_ERRORS = [
    lambda m, x: m.nn.functional.pad(x, (1,)),
    lambda m, x: m.nn.functional.pad(x, (1, 1) * 4),
    lambda m, x: m.nn.functional.pad(x, (3, 3), mode="reflect"),
    lambda m, x: m.nn.functional.pad(x, (1, 1, 3, 0), mode="reflect"),
    lambda m, x: m.nn.functional.pad(x, (4, 0), mode="circular"),
    lambda m, x: m.nn.functional.pad(x, (1, 1), mode="foo"),
    lambda m, x: m.nn.functional.pad(x, (1, 1), mode="reflect", value=2.0),
    lambda m, x: m.nn.functional.pad(x, (1, 1) * 3, mode="reflect"),
    lambda m, x: m.nn.functional.pad(x[0, 0], (1, 1), mode="replicate"),
    lambda m, x: m.nn.functional.pad(x, (-4, 0)),
    lambda m, x: m.nn.functional.pad(x, (-2, -2), mode="reflect"),
    lambda m, x: m.nn.functional.pad(x[:, :, :0], (1, 1), mode="replicate"),
    lambda m, x: m.constant_pad_nd(x, (1,)),
    lambda m, x: m.constant_pad_nd(x, (1, 1) * 4),
]


@pytest.mark.parametrize("i", range(len(PAD_ERRORS)))
def test_pad_errors_match_torch(i):
    x = np.ones((1, 2, 3), np.float32)
    raises_like(lambda: PAD_ERRORS[i](retrograd, retrograd.from_numpy(x.copy())),
                lambda: PAD_ERRORS[i](torch, torch.from_numpy(x.copy())))


# --- scaled_dot_product_attention -----------------------------------------------------------


def test_sdpa_output_layout_follows_query_like_torch():
    q = np.random.default_rng(4).standard_normal((2, 3, 2, 4)).astype(np.float32)
    (qr, qt) = pair(q)
    qr, qt = qr.transpose(1, 2), qt.transpose(1, 2)
    kv = np.random.default_rng(5).standard_normal((2, 2, 5, 4)).astype(np.float32)
    (kr, kt) = pair(kv)
    ours = F.scaled_dot_product_attention(qr, kr, kr)
    theirs = TF.scaled_dot_product_attention(qt, kt, kt)
    assert ours.stride() == theirs.stride()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    out, lse = retrograd._scaled_dot_product_flash_attention_for_cpu(qr, kr, kr)
    _, lse_t = torch._scaled_dot_product_flash_attention_for_cpu(qt, kt, kt)
    assert lse.stride() == lse_t.stride() and lse.dtype is retrograd.float32
    np.testing.assert_allclose(lse.numpy(), lse_t.numpy(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(1, 2, 3, 4), (2, 3, 4)])
def test_sdpa_fully_masked_rows_give_zeros(shape):
    rng = np.random.default_rng(6)
    q = rng.standard_normal(shape)
    mask = np.ones((shape[-2], shape[-2]), bool)
    mask[1] = False
    (qr, qt), (mr, mt) = pair(q, True), pair(mask)
    ours = F.scaled_dot_product_attention(qr, qr, qr, attn_mask=mr)
    theirs = TF.scaled_dot_product_attention(qt, qt, qt, attn_mask=mt)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
    assert not ours.detach().numpy()[..., 1, :].any()
    (gr,) = retrograd.autograd.grad(ours.sum(), qr)
    (gt,) = torch.autograd.grad(theirs.sum(), qt)
    np.testing.assert_allclose(gr.numpy(), gt.numpy(), rtol=1e-8, atol=1e-10)


def test_sdpa_flash_path_has_a_double_backward():
    """torch's CPU flash backward is not differentiable; retrograd's composite one is."""
    rng = np.random.default_rng(7)
    q, k, v = (retrograd.from_numpy(rng.standard_normal((1, 1, 2, 3))).requires_grad_()
               for _ in range(3))

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    assert f(q, k, v).grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert retrograd.autograd.gradgradcheck(f, (q, k, v))


SDPA_ERRORS = [
    lambda m, q: m.nn.functional.scaled_dot_product_attention(q, q, q.double()),
    lambda m, q: m.nn.functional.scaled_dot_product_attention(q[0], q[0], q[0],
                                                              attn_mask=m.ones(3, 3),
                                                              is_causal=True),
]


@pytest.mark.parametrize("i", range(len(SDPA_ERRORS)))
def test_sdpa_errors_match_torch(i):
    q = np.ones((1, 1, 3, 4), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like(lambda: SDPA_ERRORS[i](retrograd, retrograd.from_numpy(q.copy())),
                    lambda: SDPA_ERRORS[i](torch, torch.from_numpy(q.copy())))
