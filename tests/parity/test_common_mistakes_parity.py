"""The mistakes users make most (shapes that do not match, wrong target dtypes, a second
backward, an in-place op on a leaf, a module fed the wrong channels, ...): each gives torch's
error, type and first line, or the same result where torch accepts it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def _twice(y):
    y.backward()
    y.backward()


def cases(L):  # noqa: C901 - one table
    F = L.nn.functional
    a = L.randn(3, 4)
    b = L.randn(5, 6)
    return {
     "matmul_shape": lambda: a @ b,
     "linear_shape": lambda: L.nn.Linear(5, 2)(a),
     "ce_float_target": lambda: F.cross_entropy(a, L.tensor([0.0, 1.0, 2.0])),
     "ce_target_oob": lambda: F.cross_entropy(a, L.tensor([0, 1, 7])),
     "ce_target_shape": lambda: F.cross_entropy(a, L.tensor([0, 1])),
     "mse_shape_warn": lambda: F.mse_loss(a, L.randn(3, 1)).shape,
     "add_broadcast": lambda: a + L.randn(3, 5),
     "view_noncontig": lambda: a.t().view(12),
     "cat_dims": lambda: L.cat([a, L.randn(3, 5)]),
     "stack_shapes": lambda: L.stack([a, L.randn(3, 5)]),
     "embedding_oob": lambda: L.nn.Embedding(3, 2)(L.tensor([5])),
     "embedding_float_idx": lambda: L.nn.Embedding(3, 2)(L.tensor([1.0])),
     "conv_channels": lambda: L.nn.Conv2d(3, 4, 3)(L.randn(1, 2, 8, 8)),
     "conv_dims": lambda: L.nn.Conv2d(3, 4, 3)(L.randn(3, 8)),
     "bn_channels": lambda: L.nn.BatchNorm1d(5)(L.randn(4, 3)),
     "backward_nonscalar": lambda: L.randn(3, requires_grad=True).mul(2).backward(),
     "backward_twice": lambda: _twice((L.randn(3, requires_grad=True) ** 2).sum()),
     "inplace_leaf": lambda: L.randn(3, requires_grad=True).add_(1),
     "numpy_requires_grad": lambda: L.randn(3, requires_grad=True).numpy(),
     "item_multi": lambda: a.item(),
     "bool_multi": lambda: bool(a),
     "index_oob": lambda: a[5],
     "reshape_bad": lambda: a.reshape(5, 3),
     "expand_bad": lambda: a.expand(2, 3),
     "gather_dtype": lambda: a.gather(1, L.tensor([[0.0]])),
     "lstm_input_dim": lambda: L.nn.LSTM(4, 8)(L.randn(5, 3, 6)),
     "layer_norm_shape": lambda: F.layer_norm(a, (5,)),
     "softmax_no_dim": lambda: F.softmax(a).shape,
     "optimizer_empty": lambda: L.optim.SGD([], lr=0.1),
     "optimizer_nonleaf": lambda: L.optim.SGD([L.randn(2, requires_grad=True) * 2], lr=0.1),
     "load_state_missing": lambda: L.nn.Linear(2, 2).load_state_dict({"weight": L.zeros(2, 2)}),
     "load_state_shape": lambda: L.nn.Linear(2, 2).load_state_dict(
         {"weight": L.zeros(3, 2), "bias": L.zeros(2)}),
     "dataloader_bad_batch": lambda: list(L.utils.data.DataLoader(
         [np.zeros(2), np.zeros(3)], batch_size=2)),
     "mm_dtype": lambda: a @ L.ones(4, 2, dtype=L.float64),
     "bce_range": lambda: F.binary_cross_entropy(L.tensor([1.5]), L.tensor([1.0])),
     "nll_2d_target": lambda: F.nll_loss(L.randn(2, 3, 4),
                                         L.tensor([[0, 1, 2, 0], [1, 1, 1, 1]])).shape,
     "int_grad": lambda: L.tensor([1, 2], requires_grad=True),
     "grad_unused": lambda: L.autograd.grad(L.randn(2, requires_grad=True).sum(),
                                            L.randn(2, requires_grad=True)),
     "sum_dim_oob": lambda: a.sum(5),
     "permute_bad": lambda: a.permute(0, 0),
     "squeeze_dim": lambda: a.squeeze(3),
     "topk_big": lambda: a.topk(10),
     "arange_bad": lambda: L.arange(0, 10, -1),
     "multinomial_neg": lambda: L.multinomial(L.tensor([-1.0, 2.0]), 1),
     "randint_bad": lambda: L.randint(5, 2, (3,)),
     "pad_bad": lambda: F.pad(a, (1, 2, 3)),
     "interp_bad": lambda: F.interpolate(a, scale_factor=2, mode="bilinear"),
     "clip_grad_none": lambda: L.nn.utils.clip_grad_norm_([L.randn(2, requires_grad=True)], 1.0),
     "one_hot_neg": lambda: F.one_hot(L.tensor([-1, 2])),
     "where_dtype": lambda: L.where(a > 0, a, L.tensor(1, dtype=L.int64)).dtype,
    }


def _outcome(make, name):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = make()[name]()
        return ("ok", tuple(r.shape) if hasattr(r, "shape") else str(r).replace("retrograd",
                                                                                   "torch"))
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return (type(e).__name__, str(e).split("\n")[0][:200].replace("retrograd", "torch"))


@pytest.mark.parametrize("name", sorted(cases(torch)))
def test_common_mistake_matches_torch(name):
    torch.manual_seed(0)
    theirs = _outcome(lambda: cases(torch), name)
    retrograd.manual_seed(0)
    assert _outcome(lambda: cases(retrograd), name) == theirs
