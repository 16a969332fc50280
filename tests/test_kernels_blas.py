"""kernels/blas.py: c += alpha * (a @ b) in one call of NumPy's own BLAS gemm, or, where
that cannot take the arrays as they are, eager's arithmetic."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

from retrograd._numpy_blas import _library_dirs
from retrograd._ops.kernels import blas


def _arrays(dtype, m=70, k=33, n=90, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, n)).astype(dtype), rng.standard_normal((m, k)).astype(dtype),
            rng.standard_normal((k, n)).astype(dtype))


def test_numpys_bundled_blas_is_found_when_numpy_ships_one():
    bundled = [p for d in _library_dirs() for p in glob.glob(os.path.join(d, "lib*blas*"))]
    found = blas._gemm_for(np.dtype(np.float32)) is not None
    assert found == bool(bundled)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
def test_one_call_adds_the_scaled_product(dtype, layout):
    if blas._gemm_for(np.dtype(dtype)) is None:
        pytest.skip("this NumPy has no bundled BLAS")
    c, a, b = _arrays(dtype)
    # column-major operands: the transposes of row-major arrays, read in place
    a_in = np.ascontiguousarray(a.T).T if layout[0] == "t" else a
    b_in = np.ascontiguousarray(b.T).T if layout[1] == "t" else b
    assert a_in.flags.f_contiguous == (layout[0] == "t")
    expected = c - 0.25 * (a.astype(np.float64) @ b.astype(np.float64))
    data = c.ctypes.data
    assert blas.blas_gemm_update(c, a_in, b_in, -0.25)
    assert c.ctypes.data == data
    np.testing.assert_allclose(c, expected, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("case", ["dtype", "shape", "c_layout", "readonly", "strided", "alias",
                                  "vector", "empty"])
def test_arrays_blas_cannot_take_are_refused_and_left_as_they_were(case):
    c, a, b = _arrays(np.float32)
    if case == "dtype":
        b = b.astype(np.float64)
    elif case == "shape":
        b = b[:-1]
    elif case == "c_layout":
        c = np.asfortranarray(c)
    elif case == "readonly":
        c.flags.writeable = False
    elif case == "strided":
        a = np.repeat(a, 2, axis=1)[:, ::2]
    elif case == "alias":
        a = c[:, :33]
    elif case == "vector":
        c, b = c[:, 0].copy(), b[:, 0].copy()
    elif case == "empty":
        a, b = a[:, :0], b[:0]
    before = c.copy()
    assert not blas.blas_gemm_update(c, a, b, -0.5)
    np.testing.assert_array_equal(c, before)


@pytest.mark.parametrize("size", [(8, 6), (80, 90)])
def test_gemm_update_is_eager_arithmetic_where_blas_is_not_called(size, monkeypatch):
    c, a, b = _arrays(np.float32, m=size[0], n=size[1])
    expected = c - (a @ b) * np.float32(0.05)  # eager's sub_(g, alpha=0.05)
    if c.size >= blas.MIN_FUSED_SIZE:  # large: refuse the BLAS call to take the other way
        monkeypatch.setattr(blas, "blas_gemm_update", lambda *args: False)
    blas.gemm_update(c, a, b, -0.05)
    np.testing.assert_array_equal(c, expected)


def test_gemm_update_of_an_aliased_operand_reads_it_before_writing():
    c, _, b = _arrays(np.float32, m=90, k=90, n=90)
    a = c  # the product reads c itself: BLAS is refused, the fallback reads it first
    expected = c + 0.5 * (c @ b)
    blas.gemm_update(c, a, b, 0.5)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
