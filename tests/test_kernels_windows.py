"""Tensor.unfold's kernels on plain arrays, against torch."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from retrograd._ops.kernels import windows as K


@pytest.mark.parametrize("dim, size, step", [(0, 2, 1), (1, 3, 2), (-1, 1, 3), (1, 0, 1)])
def test_windows_view_and_backward_match_torch(dim, size, step):
    a = np.arange(20.0).reshape(4, 5)
    t = torch.from_numpy(a).requires_grad_()
    want = t.unfold(dim, size, step)
    got = K._unfold_forward(a, dim, size, step)
    np.testing.assert_array_equal(got, want.detach().numpy())
    assert np.shares_memory(got, a) or got.size == 0
    g = np.random.default_rng(0).standard_normal(got.shape)
    (ref,) = torch.autograd.grad(want, t, torch.from_numpy(g))
    np.testing.assert_allclose(K._unfold_backward_forward(g, a.shape, dim, size, step),
                               ref.numpy(), rtol=1e-12)


@pytest.mark.parametrize("size, step", [(6, 1), (-1, 1), (2, 0)])
def test_checks_raise_torchs_messages(size, step):
    with pytest.raises(RuntimeError) as info:
        torch.zeros(5).unfold(0, size, step)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._unfold_forward(np.zeros(5), 0, size, step)
