"""The convolution kernels on plain arrays, against torch.nn.functional (values, messages)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import conv as K

RNG = np.random.default_rng(1)


@pytest.mark.parametrize("groups, stride, pad, dilation", [
    (1, (1, 1), ((0, 0), (0, 0)), (1, 1)),
    (2, (2, 1), ((1, 1), (2, 2)), (1, 2)),
    (4, (1, 1), ((1, 1), (1, 1)), (1, 1)),  # depthwise
])
def test_forward_and_adjoints_match_torch(groups, stride, pad, dilation):
    x = RNG.standard_normal((2, 4, 7, 6))
    w = RNG.standard_normal((4, 4 // groups, 3, 2))
    padding = tuple(lo for lo, _ in pad)
    xt, wt = torch.from_numpy(x).requires_grad_(), torch.from_numpy(w).requires_grad_()
    yt = F.conv2d(xt, wt, None, stride, padding, dilation, groups)
    y = K.conv_nd(x, w, stride, pad, dilation, groups)
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = RNG.standard_normal(y.shape)
    gx, gw = torch.autograd.grad(yt, (xt, wt), torch.from_numpy(g))
    np.testing.assert_allclose(K.conv_nd_transpose(g, w, stride, pad, dilation, groups,
                                                   x.shape[2:]), gx.numpy(), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(K.conv_nd_weight(x, g, stride, pad, dilation, groups,
                                                w.shape[2:]), gw.numpy(), rtol=1e-10,
                               atol=1e-12)


def test_bias_and_padding_pairs():
    assert K._pairs([1, 2, 3, 4]) == ((1, 2), (3, 4))
    assert K._flat(((1, 2), (3, 4))) == [1, 2, 3, 4]
    out = np.zeros((2, 3, 2))
    np.testing.assert_array_equal(K._add_bias(out, np.array([1.0, 2.0, 3.0]))[1, :, 0],
                                  [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(K._bias_grad_array(np.ones((2, 3, 4, 5))), [40.0] * 3)


def test_checks_raise_torchs_messages():
    x, w = np.zeros((1, 3, 5, 5)), np.zeros((4, 2, 3, 3))
    with pytest.raises(RuntimeError) as info:
        F.conv2d(torch.zeros(1, 3, 5, 5), torch.zeros(4, 2, 3, 3))
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_direct(x, list(w.shape), None, [0, 0], [1, 1], 1)
    with pytest.raises(RuntimeError) as info:
        F.conv2d(torch.zeros(1, 2, 2, 2), torch.zeros(4, 2, 3, 3))
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_direct(np.zeros((1, 2, 2, 2)), list(w.shape), None, [0, 0], [1, 1], 1)


@pytest.mark.parametrize("x, w, bias", [
    (np.zeros((1, 2, 4)), np.zeros((3, 2, 2, 2)), None),
    (np.zeros((1, 2, 4, 4)), np.zeros((3, 2, 2, 2)), np.zeros(2)),
    (np.zeros((1, 2, 4, 4)), np.zeros((3, 1, 2, 2)), None),
])
def test_rank_and_shape_checks_raise_torchs_messages(x, w, bias):
    with pytest.raises(RuntimeError) as info:
        torch.convolution(torch.from_numpy(x), torch.from_numpy(w),
                          None if bias is None else torch.from_numpy(bias), [1, 1], [0, 0],
                          [1, 1], False, [0, 0], 1)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_conv(x, w, bias, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)


@pytest.mark.parametrize("x_dtype, w_dtype", [(np.float32, np.float64), (np.float64, np.float32)])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("batch", [1, 3])  # torch's message differs for a batch of one
def test_mixed_input_and_weight_dtypes_raise_torchs_message(x_dtype, w_dtype, transposed, batch):
    x, w = np.zeros((batch, 2, 4, 4), x_dtype), np.zeros((2, 2, 2, 2), w_dtype)
    with pytest.raises(RuntimeError) as info:
        torch.convolution(torch.from_numpy(x), torch.from_numpy(w), None, [1, 1], [0, 0],
                          [1, 1], transposed, [0, 0], 1)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_conv(x, w, None, [1, 1], [0, 0], [1, 1], transposed, [0, 0], 1)
