"""The dropout kernels on plain arrays: the probability check, the dims warning and
native_dropout's gradient array, against torch."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from retrograd._ops.kernels import dropout as K


def test_probability_check_is_torchs():
    K._check_p(0.0)
    K._check_p(1.0)
    with pytest.raises(ValueError) as info:
        torch.nn.functional.dropout(torch.zeros(2), 1.5)
    with pytest.raises(ValueError, match=re.escape(str(info.value))):
        K._check_p(1.5)


def test_dims_warning_is_torchs():
    with pytest.warns(UserWarning) as expected:
        torch.nn.functional.dropout2d(torch.zeros(2, 3), 0.5)
    with pytest.warns(UserWarning) as got:
        K._feature_dims_warning("dropout2d", 2, 2)
    assert str(got[0].message) == str(expected[0].message)


@pytest.mark.parametrize("p, train", [(0.25, True), (1.0, True), (0.5, False), (0.5, None)])
def test_gradient_array_matches_torch(p, train):
    grad = np.arange(1.0, 5.0)
    mask = np.array([True, False, True, True])
    want = torch.ops.aten.native_dropout_backward(torch.from_numpy(grad), torch.from_numpy(mask),
                                                  0.0 if p >= 1 else 1 / (1 - p))
    got = K._native_dropout_grad_array(grad, mask, p, train)
    if train is not None and not train:
        np.testing.assert_array_equal(got, grad * mask)
    else:
        np.testing.assert_allclose(got, want.numpy())
