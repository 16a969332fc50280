"""The random-sampling kernels on plain arrays: draws in torch's dtypes and the checks with
torch's messages."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from retrograd import _dtype as D
from retrograd._ops.kernels import random as K
from retrograd._ops.kernels.torch_sampling import TorchStream


def _stream(seed: int) -> TorchStream:
    return TorchStream(np.random.MT19937(seed))


@pytest.mark.parametrize("d", [D.float32, D.float64, D.float16, D.bfloat16])
def test_uniform_and_normal_draws(d):
    g = _stream(0)
    u = K.uniform01(g, (1000,), d)
    assert u.dtype == d.np and u.shape == (1000,)
    u64 = u.astype(np.float64)
    assert u64.min() >= 0 and u64.max() < 1 and 0.4 < u64.mean() < 0.6
    n = K.standard_normal(g, (2000,), d)
    assert n.dtype == d.np and abs(float(n.astype(np.float64).mean())) < 0.1


def test_same_generator_state_same_draws():
    a = K.uniform01(_stream(3), (5,), D.float64)
    b = K.uniform01(_stream(3), (5,), D.float64)
    np.testing.assert_array_equal(a, b)


def _torch_message(fn) -> str:
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


@pytest.mark.parametrize("kernel, torch_call", [
    (lambda: K._check_std(-1.0), lambda: torch.empty(2).normal_(0, -1.0)),
    (lambda: K._check_uniform(2.0, 1.0, D.float32), lambda: torch.empty(2).uniform_(2.0, 1.0)),
    (lambda: K._check_p(1.5), lambda: torch.empty(2).bernoulli_(1.5)),
    (lambda: K._check_range(5, 2, D.int64),
     lambda: torch.empty(2, dtype=torch.long).random_(5, 2)),
    (lambda: K._check_range(0, 300, D.uint8),
     lambda: torch.empty(2, dtype=torch.uint8).random_(0, 300)),
    (lambda: K._continuous(np.zeros(2, np.int64), "Exponential"),
     lambda: torch.empty(2, dtype=torch.long).exponential_()),
])
def test_checks_raise_torchs_messages(kernel, torch_call):
    with pytest.raises(RuntimeError, match=re.escape(_torch_message(torch_call))):
        kernel()


def test_probability_tensor_and_expansion():
    with pytest.raises(RuntimeError) as info:
        torch.bernoulli(torch.tensor([0.5, 2.0]))
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        K._check_p_tensor(np.array([0.5, 2.0]))
    assert K._expand_to(np.ones((3, 1)), (2, 3, 4)).shape == (2, 3, 4)
    with pytest.raises(RuntimeError, match="must match the existing size"):
        K._expand_to(np.ones(3), (2, 4))
