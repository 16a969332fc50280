"""The im2col / col2im kernels (nn.functional.unfold / fold) on plain arrays, against torch."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import im2col as K

RNG = np.random.default_rng(3)


def test_unfold_and_fold_match_torch():
    x = RNG.standard_normal((2, 3, 6, 5))
    args = ((2, 3), (1, 2), (1, 0), (2, 1))  # kernel, dilation, padding, stride
    cols = K._im2col_forward(x, *args)
    np.testing.assert_array_equal(cols, F.unfold(torch.from_numpy(x), *args).numpy())
    back = K._col2im_forward(cols, (6, 5), *args)
    np.testing.assert_allclose(back, F.fold(torch.from_numpy(cols), (6, 5), *args).numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("kernel, dilation, padding, stride", [
    ((0, 2), (1, 1), (0, 0), (1, 1)),
    ((2, 2), (1, 0), (0, 0), (1, 1)),
    ((2, 2), (1, 1), (-1, 0), (1, 1)),
    ((2, 2), (1, 1), (0, 0), (1, 0)),
])
def test_parameter_checks_raise_torchs_messages(kernel, dilation, padding, stride):
    with pytest.raises(RuntimeError) as info:
        F.unfold(torch.zeros(1, 1, 4, 4), kernel, dilation, padding, stride)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._im2col_forward(np.zeros((1, 1, 4, 4)), kernel, dilation, padding, stride)
