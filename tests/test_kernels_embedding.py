"""The embedding and one_hot kernels on plain arrays, against torch."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from retrograd._ops.kernels import embedding as K

RNG = np.random.default_rng(7)


def test_lookup_and_dense_backward_match_torch():
    w = RNG.standard_normal((5, 3))
    idx = np.array([[0, 2, 2], [4, 1, 2]])
    np.testing.assert_array_equal(K._embedding_forward(w, idx, -1, False, False),
                                  F.embedding(torch.from_numpy(idx), torch.from_numpy(w)).numpy())
    g = RNG.standard_normal((2, 3, 3))
    for padding_idx, by_freq in ((-1, False), (2, False), (-1, True)):
        want = torch.ops.aten.embedding_dense_backward(torch.from_numpy(g), torch.from_numpy(idx),
                                                       5, padding_idx, by_freq)
        got = K._embedding_backward_forward(g, idx, 5, padding_idx, by_freq)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-12)


def test_one_hot_matches_torch():
    t = np.array([[0, 3], [1, 1]])
    np.testing.assert_array_equal(K._one_hot_forward(t, -1),
                                  F.one_hot(torch.from_numpy(t)).numpy())
    np.testing.assert_array_equal(K._one_hot_forward(t, 5),
                                  F.one_hot(torch.from_numpy(t), 5).numpy())


@pytest.mark.parametrize("call, torch_call", [
    (lambda: K._embedding_forward(np.zeros((3, 2)), np.array([1.0], np.float32), -1, False,
                                  False),
     lambda: F.embedding(torch.tensor([1.0]), torch.zeros(3, 2))),
    (lambda: K._embedding_forward(np.zeros((3, 2)), np.array([3]), -1, False, False),
     lambda: F.embedding(torch.tensor([3]), torch.zeros(3, 2))),
    (lambda: K._one_hot_forward(np.array([-1]), -1), lambda: F.one_hot(torch.tensor([-1]))),
    (lambda: K._one_hot_forward(np.array([1], np.int32), -1),
     lambda: F.one_hot(torch.tensor([1], dtype=torch.int32))),
])
def test_checks_raise_torchs_messages(call, torch_call):
    with pytest.raises((RuntimeError, IndexError)) as info:
        torch_call()
    with pytest.raises(type(info.value), match=re.escape(str(info.value))):
        call()


def test_namespace_embedding_renorm_as_torch():
    """torch.embedding_renorm_: in place, rows used rescaled, its node refusing to
    differentiate, torch's errors for a leaf that requires grad and for float indices."""
    import numpy as np

    from tests.parity.harness import both, error_of

    weight = np.random.default_rng(0).standard_normal((5, 3)) * 2

    def prog(lib):
        leaf = lib.tensor(weight, requires_grad=True)
        y = lib.embedding_renorm_(leaf * 1, lib.tensor([0, 1, 1]), 1.0, 2.0)
        plain = lib.tensor(weight)
        same = lib.embedding_renorm_(plain, lib.tensor([[0, 3]]), 1.5, 1.0) is plain
        return [y, type(y.grad_fn).__name__, error_of(lambda: y.sum().backward()),
                plain, same, plain._version,
                error_of(lambda: lib.embedding_renorm_(leaf, lib.tensor([0]), 1.0, 2.0)),
                error_of(lambda: lib.embedding_renorm_(lib.tensor(weight), lib.tensor([0.0]),
                                                       1.0, 2.0))]

    result = both(prog, rtol=1e-12, atol=1e-12)
    assert result[1] == "EmbeddingRenormBackward0" and result[4] is True
