"""Losses beyond the op samples: error messages, warnings, numerically extreme inputs, legacy
reduction arguments and torch's top-level defaults."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from tests.nn_functional_helpers import pair, raises_like

torch = pytest.importorskip("torch")
TF = torch.nn.functional






def lib_tensor(m, values, dtype="float32"):
    return m.tensor(values, dtype=getattr(m, dtype))


ERRORS = [
    # nll_loss / cross_entropy targets
    lambda m, x: m.nn.functional.nll_loss(x, lib_tensor(m, [0, 5], "int64")),
    lambda m, x: m.nn.functional.nll_loss(x, lib_tensor(m, [-2, 0], "int64")),
    lambda m, x: m.nn.functional.nll_loss(x, lib_tensor(m, [0, 1, 2], "int64")),
    lambda m, x: m.nn.functional.nll_loss(x, lib_tensor(m, [0.0, 1.0])),
    lambda m, x: m.nn.functional.nll_loss(x, lib_tensor(m, [0, 1], "int32")),
    lambda m, x: m.nn.functional.nll_loss(x, lib_tensor(m, [0, 1], "int64"),
                                          weight=m.ones(2)),
    lambda m, x: m.nn.functional.nll_loss(x, lib_tensor(m, [0, 1], "int64"), reduction="foo"),
    lambda m, x: m.nn.functional.nll_loss(m.ones(()), lib_tensor(m, 1, "int64")),
    lambda m, x: m.nn.functional.nll_loss(m.ones(3), lib_tensor(m, [1, 2], "int64")),
    lambda m, x: m.nn.functional.nll_loss(x, m.zeros(2, 2, dtype=m.int64)),
    lambda m, x: m.nn.functional.nll_loss(m.ones(2, 3, 2, 2), m.zeros(2, 2, 3, dtype=m.int64)),
    lambda m, x: m.nn.functional.nll_loss(m.ones(2, 3, 4), m.zeros(2, 5, dtype=m.int64)),
    lambda m, x: m.nn.functional.nll_loss(m.ones(2, 3, 2, 2),
                                          m.full((2, 2, 2), 7, dtype=m.int64)),
    lambda m, x: m.nn.functional.cross_entropy(x, lib_tensor(m, [0, 5], "int64")),
    lambda m, x: m.nn.functional.cross_entropy(x, lib_tensor(m, [0, 1], "int64"),
                                               label_smoothing=1.5),
    lambda m, x: m.nn.functional.cross_entropy(x, m.zeros(2, 3, dtype=m.int32)),
    lambda m, x: m.nn.functional.cross_entropy(x, m.ones(2, 3), weight=m.ones(2)),
    # regression losses
    lambda m, x: m.nn.functional.mse_loss(x, m.ones(2, 4)),
    lambda m, x: m.nn.functional.l1_loss(x, m.ones(3, 3)),
    lambda m, x: m.nn.functional.mse_loss(x, m.ones(2, 3), weight=m.ones(3)),
    lambda m, x: m.nn.functional.smooth_l1_loss(x, m.ones(2, 3), beta=-1.0),
    lambda m, x: m.nn.functional.huber_loss(x, m.ones(2, 3), delta=0.0),
    lambda m, x: m.nn.functional.huber_loss(x, m.ones(2, 3), weight=m.ones(2, 3),
                                            reduction="avg"),
    # binary cross entropy
    lambda m, x: m.nn.functional.binary_cross_entropy(x, m.ones(2, 4)),
    lambda m, x: m.nn.functional.binary_cross_entropy(x + 1, m.ones(2, 3)),
    lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(x, m.ones(2, 4)),
    # margin / likelihood losses
    lambda m, x: m.nn.functional.margin_ranking_loss(x, x, m.ones(2)),
    lambda m, x: m.nn.functional.cosine_embedding_loss(x, x, m.ones(2, 3)),
    lambda m, x: m.nn.functional.cosine_embedding_loss(x, x[0], m.ones(2)),
    lambda m, x: m.nn.functional.soft_margin_loss(x, m.ones(2, 3, requires_grad=True)),
    lambda m, x: m.nn.functional.poisson_nll_loss(x, x, reduction="avg"),
    lambda m, x: m.nn.functional.gaussian_nll_loss(x, x, -1.0),
    lambda m, x: m.nn.functional.gaussian_nll_loss(x, x, -m.ones(2, 3)),
    lambda m, x: m.nn.functional.gaussian_nll_loss(x, x, m.ones(3, 3)),
    lambda m, x: m.nn.functional.gaussian_nll_loss(x, x, m.ones(2, 3), reduction="avg"),
    lambda m, x: m.nn.functional.multilabel_soft_margin_loss(x, x, reduction="avg"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    x = np.full((2, 3), 0.5, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like(lambda: ERRORS[i](retrograd, retrograd.from_numpy(x.copy())),
                    lambda: ERRORS[i](torch, torch.from_numpy(x.copy())))


def test_target_out_of_bounds_is_an_index_error():
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\.$"):
        F.nll_loss(retrograd.zeros(2, 3), retrograd.tensor([0, 5]))


def test_size_warning_for_broadcast_targets():
    x, t = retrograd.zeros(2, 3), retrograd.ones(3)
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[3\]\)\) that is "
                                         r"different to the input size"):
        out = F.mse_loss(x, t)
    assert out.item() == 1.0


def test_kl_div_mean_warns_and_top_level_defaults_match_torch():
    x, t = np.log([[0.2, 0.8]]).astype(np.float32), np.array([[0.5, 0.5]], np.float32)
    (xr, xt), (tr, tt) = pair(x), pair(t)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(xr, tr)
    # torch's Python bindings of the top-level functions default to no reduction
    for name in ("kl_div", "binary_cross_entropy_with_logits"):
        ours, theirs = getattr(retrograd, name)(xr, tr), getattr(torch, name)(xt, tt)
        assert tuple(ours.shape) == tuple(theirs.shape) == (1, 2)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_every_top_level_loss_binding_defaults_to_no_reduction_as_torchs():
    # NOTE [Binding reduction default]: the nn.functional forms and torch.ops.aten reduce
    def run(lib):
        rng = np.random.default_rng(0)
        a, b = (lib.from_numpy(rng.uniform(0.1, 0.9, (4, 3)).astype(np.float32))
                for _ in range(2))
        y = lib.tensor([1.0, -1.0, 1.0, -1.0])
        log_probs = lib.from_numpy(rng.standard_normal((5, 2, 4)).astype(np.float32))
        log_probs = log_probs.log_softmax(2)
        targets, lengths, target_lengths = (lib.tensor([[1, 2], [1, 1]]), lib.tensor([5, 5]),
                                            lib.tensor([2, 2]))
        calls = [lambda: lib.cosine_embedding_loss(a, b, y), lambda: lib.hinge_embedding_loss(a, b),
                 lambda: lib.margin_ranking_loss(a, b, b), lambda: lib.triplet_margin_loss(a, b, b),
                 lambda: lib.ctc_loss(log_probs, targets, lengths, target_lengths),
                 lambda: lib.ctc_loss(log_probs, targets, [5, 5], [2, 2]),
                 lambda: lib.ops.aten.ctc_loss(log_probs, targets, lengths, target_lengths),
                 lambda: lib.nn.functional.hinge_embedding_loss(a, b),
                 lambda: lib.nn.functional.triplet_margin_loss(a, b, b)]
        return [(list(f().shape), round(float(f().sum()), 4)) for f in calls]

    assert run(retrograd) == run(torch)


@pytest.mark.parametrize("kw,reduction", [({"size_average": False}, "sum"),
                                          ({"reduce": False}, "none"),
                                          ({"size_average": True, "reduce": True}, "mean")])
def test_legacy_reduction_arguments(kw, reduction):
    x, t = retrograd.tensor([[1.0, 2.0]]), retrograd.tensor([[0.0, 0.0]])
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        out = F.mse_loss(x, t, **kw)
    expected = F.mse_loss(x, t, reduction=reduction)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_bce_with_logits_is_stable_for_extreme_logits():
    x = np.array([-200.0, -50.0, -1e-3, 0.0, 30.0, 200.0], np.float32)
    t = np.array([1.0, 0.0, 0.5, 1.0, 0.0, 1.0], np.float32)
    (xr, xt), (tr, tt) = pair(x, True), pair(t)
    pw = np.array(3.0, np.float32)
    for kw in ({}, {"pos_weight": pw}):
        kr = {k: retrograd.from_numpy(v.copy()) for k, v in kw.items()}
        kt = {k: torch.from_numpy(v.copy()) for k, v in kw.items()}
        ours = F.binary_cross_entropy_with_logits(xr, tr, reduction="none", **kr)
        theirs = TF.binary_cross_entropy_with_logits(xt, tt, reduction="none", **kt)
        assert np.isfinite(ours.detach().numpy()).all()
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5)
        (gr,) = retrograd.autograd.grad(ours.sum(), xr)
        (gt,) = torch.autograd.grad(theirs.sum(), xt)
        np.testing.assert_allclose(gr.numpy(), gt.numpy(), rtol=1e-5, atol=1e-7)


def test_bce_clamps_log_and_gradient_at_zero_and_one():
    x = np.array([0.0, 1.0, 0.0, 1.0, 0.5], np.float32)
    t = np.array([0.0, 1.0, 1.0, 0.0, 0.3], np.float32)
    (xr, xt), (tr, tt) = pair(x, True), pair(t)
    ours = F.binary_cross_entropy(xr, tr, reduction="none")
    theirs = TF.binary_cross_entropy(xt, tt, reduction="none")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)
    assert ours[2].item() == 100.0
    (gr,) = retrograd.autograd.grad(ours.sum(), xr)
    (gt,) = torch.autograd.grad(theirs.sum(), xt)
    np.testing.assert_allclose(gr.numpy(), gt.numpy(), rtol=1e-6)


def test_log_softmax_based_losses_are_stable():
    x = np.array([[1000.0, 0.0, -1000.0], [-5e3, 5e3, 0.0]], np.float32)
    (xr, xt) = pair(x, True)
    tgt = np.array([2, 0])
    ours = F.cross_entropy(xr, retrograd.from_numpy(tgt), reduction="none")
    theirs = TF.cross_entropy(xt, torch.from_numpy(tgt), reduction="none")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)
    assert np.isfinite(ours.detach().numpy()).all()


def test_nll_loss_values_by_hand():
    logp = retrograd.tensor([[-1.0, -2.0, -3.0], [-0.5, -1.5, -2.5]], requires_grad=True)
    target = retrograd.tensor([2, 0])
    weight = retrograd.tensor([1.0, 1.0, 3.0])
    loss = F.nll_loss(logp, target, weight=weight)
    assert loss.item() == pytest.approx((9.0 + 0.5) / 4.0)
    (g,) = retrograd.autograd.grad(loss, logp)
    np.testing.assert_allclose(g.numpy(), [[0, 0, -0.75], [-0.25, 0, 0]])
    # 1-D input with a batch-of-one target gives a 0-d loss, as in torch
    out = F.nll_loss(retrograd.tensor([-1.0, -2.0]), retrograd.tensor([1]), reduction="none")
    assert tuple(out.shape) == () and out.item() == 2.0


def test_cross_entropy_all_ignored_is_nan_and_zero_grad():
    x = retrograd.zeros(2, 3, requires_grad=True)
    loss = F.cross_entropy(x, retrograd.tensor([-100, -100]), label_smoothing=0.1)
    assert np.isnan(loss.item())
    loss_sum = F.cross_entropy(x, retrograd.tensor([-100, -100]), reduction="sum")
    (g,) = retrograd.autograd.grad(loss_sum, x)
    np.testing.assert_array_equal(g.numpy(), np.zeros((2, 3)))


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("bad", ["input", "target"])
def test_losses_take_tensors_only(loss, bad):
    from tests.nn_functional_helpers import torch

    x = np.ones((2, 3), np.float32)
    y = np.array([0, 1])
    fr, ft = getattr(F, loss), getattr(torch.nn.functional, loss)
    if bad == "input":
        raises_like(lambda: fr(x, retrograd.tensor(y)), lambda: ft(x, torch.tensor(y)))
    else:
        raises_like(lambda: fr(retrograd.tensor(x), [0, 1]), lambda: ft(torch.tensor(x), [0, 1]))
