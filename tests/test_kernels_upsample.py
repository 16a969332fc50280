"""The resampling matrices of upsample (NOTE [Separable resampling]) on plain arrays, against
torch.nn.functional.interpolate."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import upsample as K

RNG = np.random.default_rng(4)


@pytest.mark.parametrize("kind, mode, align", [
    ("nearest", "nearest", None), ("nearest_exact", "nearest-exact", None),
    ("linear", "bilinear", False), ("linear", "bilinear", True), ("cubic", "bicubic", False),
])
def test_separable_matrices_resample_as_torch(kind, mode, align):
    x = RNG.standard_normal((1, 2, 5, 4))
    mats = K._matrices(kind, (5, 4), (7, 9), bool(align), None, x.dtype)
    got = K._apply(x, mats, False)
    want = F.interpolate(torch.from_numpy(x), size=(7, 9), mode=mode, align_corners=align)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-12)
    assert got.flags.c_contiguous


def test_transposed_matrices_are_the_adjoint():
    x, g = RNG.standard_normal((1, 1, 3)), RNG.standard_normal((1, 1, 5))
    mats = K._matrices("linear", (3,), (5,), False, None, np.float64)
    assert np.isclose((K._apply(x, mats, False) * g).sum(), (x * K._apply(g, mats, True)).sum())


def test_size_checks_raise_torchs_messages():
    with pytest.raises(RuntimeError) as info:
        torch._C._nn.upsample_nearest2d(torch.zeros(1, 1, 0, 2), [2, 2])
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_sizes(np.zeros((1, 1, 0, 2)), [2, 2], 2)
    with pytest.raises(RuntimeError, match="It is expected output_size equals to 2"):
        K._check_sizes(np.zeros((1, 1, 2, 2)), [2], 2)
