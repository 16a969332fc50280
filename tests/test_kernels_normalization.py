"""The normalization kernels (forwards and fused backwards) on plain arrays, against torch."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import normalization as K

RNG = np.random.default_rng(5)


def _t(a):
    return None if a is None else torch.from_numpy(a)


def test_layer_norm_forward_and_backward():
    x, w, b = RNG.standard_normal((3, 4, 5)), RNG.standard_normal(5), RNG.standard_normal(5)
    out, mean, rstd = K._layer_norm_forward(x, [5], w, b, 1e-5)
    xt, wt, bt = (_t(a).requires_grad_() for a in (x, w, b))
    want = F.layer_norm(xt, (5,), wt, bt, 1e-5)
    np.testing.assert_allclose(out, want.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mean[..., 0], x.mean(-1), rtol=1e-12)
    g = RNG.standard_normal(x.shape)
    grads = K._layer_norm_backward_forward(g, x, [5], mean, rstd, w, b, [True, True, True])
    for got, ref in zip(grads, torch.autograd.grad(want, (xt, wt, bt), _t(g))):
        np.testing.assert_allclose(got, ref.numpy(), rtol=1e-9, atol=1e-12)


def test_batch_norm_updates_running_statistics_as_torch():
    x = RNG.standard_normal((4, 3, 2))
    rm, rv = np.zeros(3), np.ones(3)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    out = K._batch_norm_forward(x, None, None, rm, rv, True, 0.1, 1e-5)[0]
    want = F.batch_norm(_t(x), trm, trv, None, None, True, 0.1, 1e-5)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rm, trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rv, trv.numpy(), rtol=1e-12)


def test_group_norm_forward():
    x, w, b = RNG.standard_normal((2, 6, 3)), RNG.standard_normal(6), RNG.standard_normal(6)
    out = K._group_norm_forward(x, w, b, 2, 6, 3, 3, 1e-5)[0]
    np.testing.assert_allclose(out, F.group_norm(_t(x), 3, _t(w), _t(b), 1e-5).numpy(),
                               rtol=1e-10, atol=1e-12)


def test_checks_raise_torchs_messages():
    with pytest.raises(RuntimeError) as info:
        F.layer_norm(torch.zeros(2, 3), (4,))
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._layer_norm_forward(np.zeros((2, 3)), [4], None, None, 1e-5)
    with pytest.raises(ValueError) as info:
        F.batch_norm(torch.zeros(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match=re.escape(str(info.value))):
        K._check_values_per_channel((1, 3))
