"""The creation kernels on plain arrays and Python numbers, against torch: layouts, casts,
overflow checks, Python data, arange's length and float rounding."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from retrograd import _dtype as D
from retrograd._ops.kernels import creation as K


def test_dtype_arguments():
    assert K.as_dtype(float) is D.float64 and K.as_dtype(int) is D.int64
    assert K.as_dtype(None) is None and K.as_dtype(D.float16) is D.float16
    with pytest.raises(TypeError, match="dtype must be retrograd.dtype, not str"):
        K.as_dtype("float32")


def test_strided_and_like_arrays_have_torchs_strides():
    a = K.empty_strided_array((2, 3), (1, 2), np.float32)
    assert a.shape == (2, 3) and a.strides == (4, 8)
    t = torch.empty(4, 2, 3).permute(2, 0, 1)
    expected = torch.empty_like(t).stride()
    assert K.dense_strides_like(tuple(t.shape), tuple(t.stride())) == expected
    src = np.empty((3, 4, 2)).transpose(2, 0, 1)
    like = K.empty_like_array(src, np.float32)
    assert like.dtype == np.float32 and like.strides == tuple(s // 2 for s in src.strides)


@pytest.mark.parametrize("value, dtype, overflows", [
    (300, D.int8, True), (127, D.int8, False), (-255, D.uint8, False), (-256, D.uint8, True),
    (1e39, D.float32, True), (float("inf"), D.float32, False), (float("inf"), D.float8_e4m3fn,
                                                                 True),
    (float("nan"), D.int32, True), (5, D.bool, False),
])
def test_overflow_check(value, dtype, overflows):
    assert K._overflows(value, dtype) is overflows


def test_casts_as_torch():
    a = np.array([1e-8, 0.1, 65519.0, 1e6])
    got = K.cast_array(a, D.float16)
    np.testing.assert_array_equal(got, torch.from_numpy(a).to(torch.float16).numpy())
    np.testing.assert_array_equal(K.cast_array(np.array([1000.0, -1e9]), D.float8_e4m3fn)
                                  .astype(np.float32), [448.0, -448.0])
    src = np.arange(6.0).reshape(2, 3).T
    out = K.copy_array(src, D.float32)
    assert out.dtype == np.float32 and out.strides == tuple(s // 2 for s in src.strides)


def test_python_data():
    np.testing.assert_array_equal(K._from_python([[1, 2], [3, 4]], D.int64), [[1, 2], [3, 4]])
    assert K._from_python([0.1], D.float16).dtype == np.float16
    with pytest.raises(ValueError) as info:
        torch.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match=re.escape(str(info.value))):
        K._from_python([[1, 2], [3]], D.int64)


@pytest.mark.parametrize("start, end, step, dtype", [
    (0.0, 1.0, 0.1, torch.float32), (-3.0, 7.5, 0.37, torch.float64),
    (0.0, 100.0, 0.7, torch.float32), (1.0, 2.0, 0.01, torch.float16),
    (0, 10, 3, torch.int64),
])
def test_arange_length_and_values_match_torch(start, end, step, dtype):
    d = {torch.float32: D.float32, torch.float64: D.float64, torch.float16: D.float16,
         torch.int64: D.int64}[dtype]
    want = torch.arange(start, end, step, dtype=dtype).numpy()
    n = K._arange_size(start, end, step, d)
    assert n == len(want)
    if dtype.is_floating_point:
        np.testing.assert_array_equal(K._arange_float(start, step, n, d), want)


@pytest.mark.parametrize("args", [(0, 1, 0), (0, float("inf"), 1), (5, 0, 1)])
def test_arange_checks_raise_torchs_messages(args):
    with pytest.raises(RuntimeError) as info:
        torch.arange(*args, dtype=torch.float32)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._arange_size(*args, D.float32)
