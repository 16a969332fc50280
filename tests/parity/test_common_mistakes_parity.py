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


def _bad_hook(L):
    x = L.randn(2, requires_grad=True)
    x.register_hook(lambda g: L.zeros(3))  # a gradient of the wrong shape
    (x * 2).sum().backward()


def more_cases(L):  # noqa: C901 - one table
    F, nn = L.nn.functional, L.nn
    a = L.randn(3, 4)
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    class NoBack(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    return {
     "fn_too_many_grads": lambda: Bad.apply(L.randn(2, requires_grad=True)).sum().backward(),
     "fn_no_backward": lambda: NoBack.apply(L.randn(2, requires_grad=True)).sum().backward(),
     "fn_instantiate_call": lambda: Bad()(L.randn(2)),
     "module_no_forward": lambda: nn.Module()(a),
     "module_setattr_param_tensor": lambda: setattr(nn.Linear(2, 2), "weight", L.zeros(2, 2)),
     "module_add_bad_name": lambda: nn.Module().add_module("a.b", nn.Linear(1, 1)),
     "register_buffer_bad": lambda: nn.Module().register_buffer("x", 3),
     "sequential_index": lambda: nn.Sequential(nn.ReLU())[3],
     "modulelist_bad": lambda: nn.ModuleList([1]),
     "moduledict_key": lambda: nn.ModuleDict({"a": nn.ReLU()})["b"],
     "param_non_float": lambda: nn.Parameter(L.tensor([1, 2])),
     "dropout_p": lambda: nn.Dropout(1.5),
     "conv_padding_str": lambda: nn.Conv2d(1, 1, 3, padding="valid", stride=2)(
         L.randn(1, 1, 5, 5)).shape,
     "conv_same_stride": lambda: nn.Conv2d(1, 1, 3, padding="same", stride=2),
     "maxpool_big": lambda: F.max_pool2d(L.randn(1, 1, 2, 2), 3),
     "adaptive_pool": lambda: F.adaptive_avg_pool2d(L.randn(1, 3, 5, 5), (2, 3)).shape,
     "embedding_padding": lambda: nn.Embedding(3, 2, padding_idx=5),
     "lstm_hidden_shape": lambda: nn.LSTM(4, 8)(
         L.randn(5, 3, 4), (L.zeros(1, 3, 7), L.zeros(1, 3, 8))),
     "gru_batch_first": lambda: nn.GRU(4, 8, batch_first=True)(L.randn(3, 5, 4))[0].shape,
     "mha_dims": lambda: nn.MultiheadAttention(10, 3),
     "mha_call": lambda: nn.MultiheadAttention(8, 2)(
         L.randn(4, 2, 8), L.randn(4, 2, 8), L.randn(5, 2, 8)),
     "transformer_mask": lambda: nn.TransformerEncoderLayer(8, 2)(
         L.randn(4, 2, 8), src_mask=L.zeros(3, 3)),
     "sdpa_shapes": lambda: F.scaled_dot_product_attention(
         L.randn(2, 4, 8), L.randn(2, 5, 8), L.randn(2, 6, 8)),
     "adam_lr": lambda: L.optim.Adam([L.randn(2, requires_grad=True)], lr=-1),
     "adam_betas": lambda: L.optim.Adam([L.randn(2, requires_grad=True)], betas=(1.5, 0.9)),
     "sgd_nesterov": lambda: L.optim.SGD([L.randn(2, requires_grad=True)], lr=0.1, nesterov=True),
     "sched_bad": lambda: L.optim.lr_scheduler.StepLR(object(), 1),
     "opt_state_dict_bad": lambda: L.optim.SGD(
         [L.randn(2, requires_grad=True)], lr=0.1).load_state_dict(
         {"state": {}, "param_groups": []}),
     "dup_params": lambda: L.optim.SGD([L.nn.Parameter(L.randn(2))] * 2, lr=0.1),
     "hook_bad_return": lambda: _bad_hook(L),
     "retain_grad_leaf": lambda: L.randn(2, requires_grad=True).retain_grad(),
     "grad_on_int": lambda: L.autograd.grad(L.randn(2, requires_grad=True).sum(), [L.tensor([1])]),
     "detach_inplace_view": lambda: L.randn(4, requires_grad=True)[:2].detach_(),
     "set_requires_grad_nonleaf": lambda: setattr(
         L.randn(2, requires_grad=True) * 2, "requires_grad", False),
     "tensor_from_ragged": lambda: L.tensor([[1, 2], [3]]),
     "tensor_from_str": lambda: L.tensor("abc"),
     "as_tensor_list_tensors": lambda: L.tensor([L.randn(2), L.randn(2)]).shape,
     "zeros_neg": lambda: L.zeros(-1),
     "full_no_dtype_int": lambda: L.full((2,), 3).dtype,
     "cat_empty_list": lambda: L.cat([]),
     "split_bad": lambda: a.split([1, 1], dim=0),
     "chunk_zero": lambda: a.chunk(0),
     "index_bool_shape": lambda: a[L.tensor([True, False])],
     "masked_fill_shape": lambda: a.masked_fill(L.tensor([True, False]), 0),
     "scatter_shape": lambda: L.zeros(3).scatter_(0, L.tensor([[0]]), L.ones(1)),
     "unfold_bad": lambda: a.unfold(1, 5, 1),
     "norm_p": lambda: a.norm(p="fro", dim=(0, 1, 2)),
     "dataloader_workers_neg": lambda: L.utils.data.DataLoader([1, 2], num_workers=-1),
     "random_split_bad": lambda: L.utils.data.random_split(range(10), [3, 3]),
     "tensordataset_sizes": lambda: L.utils.data.TensorDataset(L.zeros(3), L.zeros(4)),
     "clip_bad_norm_type": lambda: L.nn.utils.clip_grad_norm_(
         [L.nn.Parameter(L.randn(2))], 1.0, norm_type="x"),
     "interpolate_size": lambda: F.interpolate(L.randn(1, 1, 4), size=(2, 2)),
     "grid_sample_dims": lambda: F.grid_sample(L.randn(1, 1, 4, 4), L.randn(1, 2, 2, 3)),
     "kl_div_warn": lambda: F.kl_div(L.randn(2, 3).log_softmax(1), L.randn(2, 3).softmax(1)).shape,
     "ctc_lengths": lambda: F.ctc_loss(L.randn(5, 2, 4).log_softmax(2), L.tensor([[1, 2], [1, 1]]),
                                       L.tensor([5, 5]), L.tensor([3, 2])),
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


TABLES = [(table, name) for table in (cases, more_cases) for name in sorted(table(torch))]


@pytest.mark.parametrize("table,name", TABLES, ids=[name for _, name in TABLES])
def test_common_mistake_matches_torch(table, name):
    torch.manual_seed(0)
    theirs = _outcome(lambda: table(torch), name)
    retrograd.manual_seed(0)
    assert _outcome(lambda: table(retrograd), name) == theirs
