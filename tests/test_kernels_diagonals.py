"""diag_embed's kernel on plain arrays, against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from retrograd._ops.kernels import diagonals as K


@pytest.mark.parametrize("offset, dim1, dim2", [(0, -2, -1), (1, 0, 2), (-2, 2, 0)])
def test_diag_embed_matches_torch(offset, dim1, dim2):
    a = np.arange(6.0).reshape(2, 3)
    want = torch.diag_embed(torch.from_numpy(a), offset, dim1, dim2).numpy()
    got = K._diag_embed_forward(a, offset, dim1, dim2)
    np.testing.assert_array_equal(got, want)
    assert got.flags.c_contiguous


def test_identical_dims_raise_torchs_message():
    with pytest.raises(RuntimeError) as info:
        torch.diag_embed(torch.zeros(3), 0, 0, 0)
    with pytest.raises(RuntimeError, match=str(info.value)):
        K._diag_embed_forward(np.zeros(3), 0, 0, 0)
