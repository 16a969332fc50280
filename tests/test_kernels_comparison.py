"""The comparison and bitwise kernels on plain arrays, against torch."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from retrograd._ops.kernels import comparison as K


def test_bitwise_kernels_match_torch():
    a, b = np.array([5, -3, 12], np.int32), np.array([3, 6, -1], np.int32)
    np.testing.assert_array_equal(K._bitwise(np.bitwise_and, "bitwise_and_cpu")(a, b),
                                  torch.bitwise_and(torch.from_numpy(a), torch.from_numpy(b)))
    np.testing.assert_array_equal(K._bitwise_not(a), torch.bitwise_not(torch.from_numpy(a)))
    flags = np.array([True, False])
    np.testing.assert_array_equal(K._bitwise_not(flags), [False, True])


def test_bitwise_on_floats_raises_torchs_message():
    with pytest.raises(RuntimeError) as info:
        torch.bitwise_and(torch.zeros(2), torch.zeros(2))
    message = str(info.value)
    with pytest.raises(NotImplementedError, match=re.escape(message)):
        K._bitwise(np.bitwise_and, "bitwise_and_cpu")(np.zeros(2, np.float32),
                                                      np.zeros(2, np.float32))


def test_float_tests_on_integers():
    assert K._float_test(np.isnan, False)(np.array([1, 2])).tolist() == [False, False]
    assert K._float_test(np.isfinite, True)(np.array([1])).tolist() == [True]
    assert K._float_test(np.isnan, False)(np.array([np.nan, 1.0])).tolist() == [True, False]


def test_isclose_matches_torch():
    a = np.array([1.0, np.nan, 1e-9, np.inf, 2.0])
    b = np.array([1.0 + 1e-9, np.nan, 0.0, np.inf, 2.1])
    for equal_nan in (False, True):
        want = torch.isclose(torch.from_numpy(a), torch.from_numpy(b), 1e-5, 1e-8, equal_nan)
        np.testing.assert_array_equal(K._isclose(a, b, 1e-5, 1e-8, equal_nan), want.numpy())


@pytest.mark.parametrize("other, rtol, atol", [
    (np.zeros(2, np.float32), 1e-5, 1e-8), (np.zeros(2), -1.0, 1e-8), (np.zeros(2), 1e-5, -1.0),
])
def test_isclose_checks_raise_torchs_messages(other, rtol, atol):
    with pytest.raises(RuntimeError) as info:
        torch.isclose(torch.zeros(2, dtype=torch.float64), torch.from_numpy(other), rtol, atol)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._isclose(np.zeros(2), other, rtol, atol, False)
