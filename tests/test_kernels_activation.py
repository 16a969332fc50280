"""The activation kernels on plain arrays, against torch (values, dtypes and messages)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import activation as K

X = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 4.0])


@pytest.mark.parametrize("kernel, reference", [
    (K._relu, F.relu),
    (lambda a: K._softplus(a, 2.0, 1.0), lambda t: F.softplus(t, 2.0, 1.0)),
    (K._mish, F.mish),
    (K._log_sigmoid, F.logsigmoid),
    (lambda a: K._elu(a, 1.5, 1.0, 1.0), lambda t: F.elu(t, 1.5)),
    (lambda a: K._leaky_relu(a, 0.1), lambda t: F.leaky_relu(t, 0.1)),
    (lambda a: K._hardtanh(a, -1.0, 2.0), lambda t: F.hardtanh(t, -1.0, 2.0)),
    (K._hardsigmoid, F.hardsigmoid),
    (K._hardswish, F.hardswish),
    (lambda a: K._threshold(a, 0.1, 20.0), lambda t: F.threshold(t, 0.1, 20.0)),
])
def test_forwards_match_torch(kernel, reference):
    np.testing.assert_allclose(kernel(X), reference(torch.from_numpy(X)).numpy(), rtol=1e-12)


def test_integer_inputs():
    a = np.array([-2, 0, 3], dtype=np.int64)
    np.testing.assert_array_equal(K._relu(a), torch.relu(torch.from_numpy(a)).numpy())
    got = K._hardtanh(a, -1, 1)
    assert got.dtype == np.int64 and got.tolist() == [-1, 0, 1]


def test_float_only_kernels_compute_half_in_float32():
    forward = K._float_only("mish_cpu", K._mish)
    got = forward(X.astype(np.float16))
    want = F.mish(torch.from_numpy(X.astype(np.float16)))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want.numpy())
    with pytest.raises(NotImplementedError) as info:
        F.mish(torch.zeros(2, dtype=torch.long))
    with pytest.raises(NotImplementedError, match=re.escape(str(info.value))):
        forward(np.zeros(2, np.int64))


def test_checks_raise_torchs_messages():
    with pytest.raises(RuntimeError, match=re.escape(K.RELU_BOOL)):
        K._relu(np.zeros(2, bool))
    with pytest.raises(RuntimeError) as info:
        torch.relu(torch.zeros(2, dtype=torch.bool))
    assert str(info.value) == K.RELU_BOOL
    with pytest.raises(RuntimeError) as info:
        F.hardtanh(torch.zeros(2, dtype=torch.uint8), -1.0, 1.0)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._hardtanh(np.zeros(2, np.uint8), -1.0, 1.0)
    with pytest.raises(RuntimeError, match=re.escape(K.GELU_APPROX)):
        K._check_approximate("fast")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["softplus", "mish"])
def test_softplus_and_mish_at_the_extremes(name, dtype):
    """Large and infinite inputs neither overflow nor warn (torch computes them silently), and
    every value is within float rounding of torch's."""
    import warnings

    values = np.array([-1e4, -100.0, -20.0, -1.0, 0.0, 1e-8, 1.0, 20.0, 88.0, 1e4,
                       np.inf, -np.inf, np.nan], dtype=dtype)
    kernel = K._mish if name == "mish" else (lambda a: K._softplus(a, 1.0, 20.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = kernel(values)
    theirs = getattr(F, name)(torch.from_numpy(values)).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=0, equal_nan=True)
