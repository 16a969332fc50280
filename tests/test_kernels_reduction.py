"""The var/std and vector-norm kernels and the dim helpers on plain arrays, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from retrograd._ops.kernels import reduction as K

A = np.random.default_rng(0).standard_normal((3, 4))


def test_dims_and_axes():
    assert K.dims([-1, 0], 3) == (2, 0)
    assert K.reduced_axes([], 2) is None and K.reduced_axes(None, 2) is None
    with pytest.raises(RuntimeError, match="appears multiple times"):
        K.dims([1, -1], 2)
    with pytest.raises(IndexError):
        K.dims(2, 2)
    assert K.out_shape((2, 3, 4), (1,), True) == (2, 1, 4)


@pytest.mark.parametrize("correction", [None, 0, 2])
def test_var_and_std_with_mean(correction):
    ddof = 1 if correction is None else correction
    var, mean = K.var("var", A, 1, correction, False)
    np.testing.assert_allclose(var, A.var(1, ddof=ddof))
    np.testing.assert_allclose(mean, A.mean(1))
    std, _ = K.var("std", A, [0, 1], correction, True, sqrt=True)
    np.testing.assert_allclose(std, A.std(keepdims=True, ddof=ddof))


def test_var_float32_overflow_recomputes_in_float64():
    big = np.array([3e19, -3e19], np.float32)
    var, _ = K.var("var", big, None, 0, False)
    assert var.dtype == np.float32 and np.isinf(var)  # 9e38 is past float32's range
    std, _ = K.var("std", big, None, 0, False, sqrt=True)
    np.testing.assert_allclose(std, 3e19, rtol=1e-6)


def test_var_errors_and_dof_warning():
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        K.var("var", np.arange(3), None, None, False)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        K.var("var", np.ones(1), None, None, False)


@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, float("inf"), -float("inf"), 0.5])
def test_vector_norm(ord):
    got = K.vector_norm(A, ord, (1,), False, None)
    np.testing.assert_allclose(got, np.linalg.norm(A, ord, axis=1))


def test_vector_norm_errors():
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        K.vector_norm(np.arange(3), 2, None, False, None)
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        K.vector_norm(np.zeros((0,)), float("inf"), None, False, None)
    assert K.ord_text(float("-inf")) == "-inf" and K.ord_text(2.0) == "2"
