"""The distance kernels on plain arrays, against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from retrograd._ops.kernels import distance as K

RNG = np.random.default_rng(10)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.5, float("inf")])
def test_pdist_and_p_norm_match_torch(p):
    a = RNG.standard_normal((5, 3))
    a[1] = a[0]  # a zero distance
    np.testing.assert_allclose(K._pdist_forward_kernel(a, p),
                               torch.pdist(torch.from_numpy(a), p).numpy(), rtol=1e-12)
    d = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(K._p_norm(d, p),
                               torch.linalg.vector_norm(torch.from_numpy(d), p, -1).numpy(),
                               rtol=1e-12)


def test_pairs_are_in_pdists_order():
    i, j = K._pairs(4)
    assert list(zip(i.tolist(), j.tolist())) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert K._pdist_forward_kernel(np.zeros((1, 2), np.float32), 2.0).shape == (0,)
