"""Empty batches and sequences through normalization and attention layers: torch returns the
empty output and backpropagates zeros; so must retrograd, without NumPy's errors or warnings."""

from __future__ import annotations

import warnings

import pytest

from retrograd._ops.layout import QUIET_MODULES
from tests.nn.nn_harness import module_parity, randn


@pytest.fixture(autouse=True)
def no_numpy_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=QUIET_MODULES)
        yield
    assert not [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("shape", [(0, 4, 3), (0, 4), (0, 4, 2, 2)])
def test_group_norm_empty_batch(shape):
    out = module_parity(lambda lib: lib.nn.GroupNorm(2, 4), [randn(*shape)])
    assert tuple(out["out"][0].shape) == shape
    assert not out["param_grads"]["weight"].abs().sum().item()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("shape", [(0, 2, 4), (3, 0, 4), (0, 0, 4), (0, 4)])
@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_empty(shape, batch_first, need_weights):
    x = randn(*shape)
    out = module_parity(lambda lib: lib.nn.MultiheadAttention(4, 2, batch_first=batch_first),
                        [x, x, x], kwargs={"need_weights": need_weights})
    assert tuple(out["out"][0].shape) == shape


def test_multihead_attention_empty_with_masks():
    def make(lib):
        class Masked(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.mha = lib.nn.MultiheadAttention(4, 2)

            def forward(self, x):
                kpm = lib.zeros((2, 0), dtype=lib.bool)
                mask = lib.zeros((0, 0))
                return self.mha(x, x, x, key_padding_mask=kpm, attn_mask=mask)

        return Masked()

    out = module_parity(make, [randn(0, 2, 4)], dtype=None)
    assert tuple(out["out"][1].shape) == (2, 0, 0)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("shape", [(0, 2, 4), (3, 0, 4)])
@pytest.mark.parametrize("train", [False, True])
def test_transformer_encoder_layer_empty(shape, batch_first, norm_first, train):
    def make(lib):
        return lib.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=batch_first,
                                              norm_first=norm_first)

    out = module_parity(make, [randn(*shape)], train=train)
    assert tuple(out["out"][0].shape) == shape


@pytest.mark.parametrize("shape", [(2, 4, 0), (0, 4, 0)])
def test_group_norm_empty_groups_are_silent(shape):
    # no elements per group: empty output and input gradient as torch, without NumPy's
    # "Mean of empty slice" (torch's weight gradient is nan there; retrograd's sum over no
    # elements is 0)
    import torch

    import retrograd

    for lib in (retrograd, torch):
        m = lib.nn.GroupNorm(2, 4)
        x = lib.randn(*shape, requires_grad=True)
        y = m(x)
        y.sum().backward()
        assert tuple(y.shape) == shape and tuple(x.grad.shape) == shape
