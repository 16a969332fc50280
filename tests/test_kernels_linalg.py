"""The matrix-product kernels on plain arrays, against torch (values and messages)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from retrograd._ops.kernels import linalg as K

RNG = np.random.default_rng(0)


def _message(fn) -> str:
    with pytest.raises(Exception) as info:
        fn()
    return str(info.value)


def _t(a):
    return torch.from_numpy(a)


def test_products_match_torch():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5))
    s = RNG.standard_normal((3, 5))
    np.testing.assert_allclose(K._mm_forward(a, b), (_t(a) @ _t(b)).numpy())
    np.testing.assert_allclose(K._addmm_forward(s, a, b, 0.5, 2.0),
                               torch.addmm(_t(s), _t(a), _t(b), beta=0.5, alpha=2.0).numpy())
    v = RNG.standard_normal(4)
    np.testing.assert_allclose(K._mv_forward(a, v), torch.mv(_t(a), _t(v)).numpy())
    np.testing.assert_allclose(K._dot_forward(v, v), torch.dot(_t(v), _t(v)).numpy())
    x, y = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 2))
    np.testing.assert_allclose(K._bmm_forward(x, y), torch.bmm(_t(x), _t(y)).numpy())


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bki", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(3, 3)]),
    ("...i,i->...", [(2, 3, 4), (4,)]),
    ("i,j->ij", [(3,), (2,)]),
])
def test_einsum_matches_torch(equation, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    np.testing.assert_allclose(K._einsum_forward(equation, arrays),
                               torch.einsum(equation, *map(_t, arrays)).numpy(), rtol=1e-12)


def test_checks_raise_torchs_messages():
    a, b = np.zeros((2, 3)), np.zeros((2, 3))
    expected = _message(lambda: torch.mm(_t(a), _t(b)))
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        K._mm_forward(a, b)
    f = np.zeros((2, 3, 4), np.float32)
    expected = _message(lambda: torch.bmm(_t(np.zeros((2, 3, 4))), _t(np.zeros((2, 4, 5),
                                                                                np.float32))))
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        K._bmm_forward(np.zeros((2, 3, 4)), np.zeros((2, 4, 5), np.float32))
    expected = _message(lambda: torch.mm(_t(f[0].astype(bool)), _t(f[0].T.astype(bool))))
    with pytest.raises(NotImplementedError, match=re.escape(expected)):
        K._mm_forward(f[0].astype(bool), f[0].T.astype(bool))


def test_inverse_and_qr():
    a = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(K._inverse_forward(a), torch.linalg.inv(_t(a)).numpy(),
                               rtol=1e-10)
    q, r = K._qr_forward(a[0], "reduced")
    np.testing.assert_allclose(q @ r, a[0], atol=1e-12)
    np.testing.assert_allclose(np.abs(r), np.abs(torch.linalg.qr(_t(a[0])).R.numpy()),
                               atol=1e-12)


@pytest.mark.parametrize("case", ["rows", "columns", "both", "batched_rows", "batched_columns",
                                  "broadcast_batch", "vector"])
def test_expanded_operands_multiply_once_and_repeat(case):
    # an operand whose rows (or, on the right, columns) are all one vector: one product,
    # repeated, equal to the full product of the materialized operands (and laid out as one)
    row = RNG.standard_normal((1, 6)).astype(np.float32)
    col = RNG.standard_normal((6, 1)).astype(np.float32)
    full_a = RNG.standard_normal((4, 6)).astype(np.float32)
    full_b = RNG.standard_normal((6, 3)).astype(np.float32)
    a, b = {
        "rows": (np.broadcast_to(row, (4, 6)), full_b),
        "columns": (full_a, np.broadcast_to(col, (6, 3))),
        "both": (np.broadcast_to(np.float32(2.5), (4, 6)), np.broadcast_to(col, (6, 3))),
        "batched_rows": (np.broadcast_to(row, (2, 4, 6)), np.stack([full_b, full_b * 2])),
        "batched_columns": (np.stack([full_a, -full_a]), np.broadcast_to(col, (2, 6, 3))),
        "broadcast_batch": (np.broadcast_to(row, (4, 6)), np.stack([full_b, full_b * 3])),
        "vector": (np.broadcast_to(row, (4, 6)), full_b[:, 0].copy()),
    }[case]
    assert K.repeated_operands(a, b) == (case != "vector")  # a vector: BLAS on a copy
    got = K.np_matmul(a, b)
    expected = (_t(np.ascontiguousarray(a)) @ _t(np.ascontiguousarray(b))).numpy()
    assert got.shape == expected.shape and got.dtype == np.float32
    assert got.flags.c_contiguous and got.flags.writeable
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    s = RNG.standard_normal(expected.shape[-1:]).astype(np.float32)
    if got.ndim == 2:
        np.testing.assert_allclose(K._addmm_forward(s, a, b, 1, 1), expected + s, rtol=1e-6,
                                   atol=1e-6)
