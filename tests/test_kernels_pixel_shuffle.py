"""pixel_shuffle / pixel_unshuffle on plain arrays, against torch."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import pixel_shuffle as K


def test_shuffle_and_unshuffle_match_torch():
    x = np.arange(2 * 8 * 3 * 2, dtype=np.float32).reshape(2, 8, 3, 2)
    got = K._shuffle_forward(x, 2)
    np.testing.assert_array_equal(got, F.pixel_shuffle(torch.from_numpy(x), 2).numpy())
    np.testing.assert_array_equal(K._unshuffle_forward(got, 2), x)


@pytest.mark.parametrize("shape, fn, kernel", [
    ((1, 3, 2, 2), F.pixel_shuffle, K._shuffle_forward),
    ((1, 1, 3, 2), F.pixel_unshuffle, K._unshuffle_forward),
])
def test_checks_raise_torchs_messages(shape, fn, kernel):
    with pytest.raises(RuntimeError) as info:
        fn(torch.zeros(shape), 2)
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        kernel(np.zeros(shape), 2)
