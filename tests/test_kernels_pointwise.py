"""The pointwise NumPy kernels on plain arrays, without Tensor or autograd."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest
import torch

from retrograd._ops.kernels import pointwise as K


def test_kernels_import_no_tensor():
    tree = ast.parse(inspect.getsource(K))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in imported if m and (m.endswith("_tensor") or "registry" in m)}


def test_integer_power_with_negative_exponents():
    base = np.array([2, 1, -1, -1, 0, 3], dtype=np.int64)
    exponent = np.array([-1, -3, -3, -2, 2, 2], dtype=np.int64)
    expected = torch.pow(torch.from_numpy(base), torch.from_numpy(exponent)).numpy()
    np.testing.assert_array_equal(K._int_pow(base, exponent), expected)


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounded_integer_division(mode):
    a = np.array([7, -7, 7, -7, 0], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3], dtype=np.int32)
    expected = torch.div(torch.from_numpy(a), torch.from_numpy(b), rounding_mode=mode).numpy()
    got = K._div_trunc(a, b) if mode == "trunc" else K._div_floor(a, b)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype


def test_integer_division_by_zero_raises():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        K._div_floor(np.array([1, 2]), np.array([1, 0]))


def test_sign_of_nan_is_zero():
    a = np.array([-2.0, 0.0, np.nan, 3.0], dtype=np.float32)
    np.testing.assert_array_equal(K._sign(a), torch.sign(torch.from_numpy(a)).numpy())


def test_erf_single_precision_matches_torch():
    a = np.linspace(-5, 5, 1001, dtype=np.float32)
    np.testing.assert_allclose(K.erf_array(a), torch.erf(torch.from_numpy(a)).numpy(),
                               rtol=0, atol=2e-7)


def test_lerp_is_exact_at_the_ends():
    a = np.array([1.0, -3.0, 1e8], dtype=np.float32)
    end = np.array([2.0, 5.0, -1e-8], dtype=np.float32)
    np.testing.assert_array_equal(K._lerp(a, end, 1.0), end)
    np.testing.assert_array_equal(K._lerp(a, end, 0.0), a)


def test_fill_writes_in_place():
    dst = np.zeros(3, np.float32)
    K._fill(dst, 2.5)
    np.testing.assert_array_equal(dst, [2.5, 2.5, 2.5])
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        K._fill(dst, np.ones(2))


def test_clamp_scalar_keeps_float_dtype():
    a = np.array([-1.0, 0.5, 3.0], dtype=np.float32)
    out = K._clamp_scalar(a, 0, 1)
    np.testing.assert_array_equal(out, [0.0, 0.5, 1.0])
    assert out.dtype == np.float32


@pytest.mark.parametrize("name", ["tanh_backward", "sigmoid_backward"])
@pytest.mark.parametrize("shapes", [((3, 4, 2), (1, 4, 2)), ((1, 4, 2), (3, 4, 2)),
                                    ((4, 2), (4, 2)), ((), (4, 2))])
def test_activation_backwards_broadcast_like_torch(name, shapes):
    # torch's kernels are binary ops over broadcast operands; vmap's rules hand them such pairs
    rng = np.random.default_rng(0)
    g, y = (rng.uniform(-1, 1, s) for s in shapes)
    got = getattr(K, "_" + name)(g, y)
    want = getattr(torch.ops.aten, name)(torch.tensor(g), torch.tensor(y)).numpy()
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
