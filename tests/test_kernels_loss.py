"""The loss kernels on plain arrays, against torch.nn.functional (values and messages)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import loss as K

RNG = np.random.default_rng(6)


def _t(a):
    return torch.from_numpy(a)


def test_reduction_arguments():
    assert [K.reduction_enum(r) for r in ("none", "mean", "sum")] == [0, 1, 2]
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        K.reduction_enum("bad")
    assert K.legacy_reduction(None, False, "mean") == "none"
    assert K.legacy_reduction(False, None, "mean") == "sum"


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_elementwise_losses_match_torch(reduction):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    r = K.reduction_enum(reduction)
    np.testing.assert_allclose(K._mse_forward(a, b, r), F.mse_loss(_t(a), _t(b),
                                                                   reduction=reduction).numpy())
    np.testing.assert_allclose(K._huber_forward(a, b, r, 0.5),
                               F.huber_loss(_t(a), _t(b), reduction, 0.5).numpy())
    np.testing.assert_allclose(K._smooth_l1_forward(a, b, r, 0.5),
                               F.smooth_l1_loss(_t(a), _t(b), reduction=reduction,
                                                beta=0.5).numpy())
    p, t = 1 / (1 + np.exp(-a)), (b > 0).astype(np.float64)
    np.testing.assert_allclose(K._bce_forward(p, t, None, r),
                               F.binary_cross_entropy(_t(p), _t(t), reduction=reduction).numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(K._bce_logits_forward(a, t, None, None, r),
                               F.binary_cross_entropy_with_logits(
                                   _t(a), _t(t), reduction=reduction).numpy(), rtol=1e-12)


def test_nll_loss_with_weights_and_ignore_index():
    x = RNG.standard_normal((5, 3))
    t = np.array([0, 2, 1, 2, 0])
    w = np.array([0.2, 1.0, 3.0])
    out, total = K._nll_forward(x, t, w, 1, 2)
    want = F.nll_loss(_t(x), _t(t), _t(w), ignore_index=2)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-12)
    assert total == pytest.approx(w[[0, 1, 0]].sum())


def test_checks_raise_torchs_messages():
    with pytest.raises(RuntimeError) as info:
        F.nll_loss(torch.zeros(2, 3), torch.zeros(2, dtype=torch.int32))
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_target(np.zeros(2, np.int32))
    with pytest.raises(RuntimeError) as info:  # the aten op's check (F.nll_loss checks first)
        torch.ops.aten.nll_loss_forward(torch.zeros(2, 3), torch.zeros(3, dtype=torch.long),
                                        None, 1, -100)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_nll_shapes(np.zeros((2, 3)), np.zeros(3, np.int64), None)
