"""The pooling kernels on plain arrays, against torch.nn.functional."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import pooling as K

RNG = np.random.default_rng(2)


def test_output_size_is_torchs():
    assert K.pool_out_size(5, 2, 0, 2, 1, False) == 2
    assert K.pool_out_size(5, 2, 0, 2, 1, True) == 3
    # a last window that would start in the right padding is dropped
    assert K.pool_out_size(4, 2, 1, 2, 1, True) == 3


@pytest.mark.parametrize("k, s, p, d, ceil", [
    ((2, 2), (2, 2), (0, 0), (1, 1), False),
    ((3, 2), (2, 1), (1, 1), (1, 2), True),
])
def test_max_pool_values_and_indices(k, s, p, d, ceil):
    x = RNG.standard_normal((2, 3, 7, 8))
    values, indices = K._max_pool_fwd(x, k, s, p, d, ceil)
    tv, ti = F.max_pool2d(torch.from_numpy(x), k, s, p, d, ceil, return_indices=True)
    np.testing.assert_array_equal(values, tv.numpy())
    np.testing.assert_array_equal(indices, ti.numpy())
    grad = K._scatter_fwd(np.ones_like(values), indices, list(x.shape))
    assert grad.shape == x.shape and grad.sum() == values.size


def test_avg_and_adaptive_pool():
    x = RNG.standard_normal((1, 2, 6, 5))
    got = K._avg_pool_fwd(x, (3, 2), (2, 2), (1, 1), True, False, None)
    want = F.avg_pool2d(torch.from_numpy(x), (3, 2), (2, 2), (1, 1), True, False)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12)
    got = K._adaptive_fwd(x, (4, 3))
    np.testing.assert_allclose(got, F.adaptive_avg_pool2d(torch.from_numpy(x), (4, 3)).numpy(),
                               rtol=1e-12)


def test_argument_checks():
    with pytest.raises(RuntimeError, match="non-empty 3D or 4D"):
        K._max_pool_fwd(np.zeros((2, 2)), (1, 1), (1, 1), (0, 0), (1, 1), False)
    assert K._pool2d_args("max_pool2d", 3, None, 1) == ([3, 3], [3, 3], [1, 1], [1, 1])
    with pytest.raises(RuntimeError, match="max_pool2d: kernel_size must either be a single int"):
        K._pool2d_args("max_pool2d", (1, 2, 3), None, 0)
