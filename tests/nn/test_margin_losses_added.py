"""multi_margin_loss, multilabel_margin_loss, the triplet losses and the margin / embedding /
likelihood loss modules beyond the op samples: torch's errors, edge cases, module parity."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from tests.nn.nn_harness import module_parity, randn
from tests.nn_functional_helpers import pair, raises_like

torch = pytest.importorskip("torch")
TF = torch.nn.functional

X = randn(4, 5)
T = np.array([1, 0, 3, 4])
ML = np.array([[1, 0, -1, 2, 2], [3, -1, 0, 0, 0], [-1, 0, 0, 0, 0], [0, 0, 2, 3, 4]])


def _lib_args(lib, *arrays):
    return [lib.from_numpy(np.array(a, copy=True)) for a in arrays]


ERRORS = {
    "mm_target_size": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, X, T[:3])),
    "mm_target_range": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, X, np.array([1, 2, 3, 5]))),
    "mm_target_negative": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, X, np.array([1, 2, 3, -1]))),
    "mm_weight_size": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, X, T), weight=lib.ones(4)),
    "mm_weight_2d": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, X, T), weight=lib.ones(5, 1)),
    "mm_weight_dtype": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, X.astype(np.float64), T), weight=lib.ones(5)),
    "mm_weight_grad": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, X, T), weight=lib.ones(5, requires_grad=True)),
    "mm_p3": lambda lib: lib.nn.functional.multi_margin_loss(*_lib_args(lib, X, T), p=3),
    "mm_empty_classes": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, X[:, :0], T)),
    "mm_3d": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, randn(2, 3, 4), T[:2])),
    "mm_float_target": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, X, T.astype(np.float32))),
    "mm_long_input": lambda lib: lib.nn.functional.multi_margin_loss(
        *_lib_args(lib, np.arange(20).reshape(4, 5), T)),
    "mml_target_rows": lambda lib: lib.nn.functional.multilabel_margin_loss(
        *_lib_args(lib, X, ML[:3])),
    "mml_target_cols": lambda lib: lib.nn.functional.multilabel_margin_loss(
        *_lib_args(lib, X, ML[:, :3])),
    "mml_range_high": lambda lib: lib.nn.functional.multilabel_margin_loss(
        *_lib_args(lib, X, ML + 1)),
    "mml_range_low": lambda lib: lib.nn.functional.multilabel_margin_loss(
        *_lib_args(lib, X, ML - 1)),
    "mml_vector_target": lambda lib: lib.nn.functional.multilabel_margin_loss(
        *_lib_args(lib, X[0], ML[:1])),
    "mml_int_target": lambda lib: lib.nn.functional.multilabel_margin_loss(
        *_lib_args(lib, X, ML.astype(np.int32))),
    "mml_long_input": lambda lib: lib.nn.functional.multilabel_margin_loss(
        *_lib_args(lib, np.arange(20).reshape(4, 5), ML)),
    "triplet_margin": lambda lib: lib.nn.functional.triplet_margin_loss(
        *_lib_args(lib, X, X, X), margin=0),
    "triplet_dims": lambda lib: lib.nn.functional.triplet_margin_loss(
        *_lib_args(lib, X, X[0], X)),
    "triplet_reduction": lambda lib: lib.nn.functional.triplet_margin_loss(
        *_lib_args(lib, X, X, X), reduction="avg"),
    "tmwd_reduction": lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        *_lib_args(lib, X, X, X), reduction="avg"),
    "tmwd_margin": lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        *_lib_args(lib, X, X, X), margin=-1.0),
    "tmwd_dims": lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        *_lib_args(lib, X, X, X[0])),
    "module_triplet_margin": lambda lib: lib.nn.TripletMarginLoss(margin=0.0),
    "module_tmwd_margin": lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=0.0),
    "module_mm_p": lambda lib: lib.nn.MultiMarginLoss(p=3),
    "module_mm_weight": lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    raises_like(lambda: ERRORS[name](retrograd), lambda: ERRORS[name](torch))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_empty_batch_and_shapes(reduction):
    cases = [
        lambda lib: lib.nn.functional.multi_margin_loss(*_lib_args(lib, X[:0], T[:0]),
                                                        reduction=reduction),
        lambda lib: lib.nn.functional.multilabel_margin_loss(*_lib_args(lib, X[:0], ML[:0]),
                                                             reduction=reduction),
        lambda lib: lib.nn.functional.multi_margin_loss(*_lib_args(lib, X[0], np.array(2)),
                                                        reduction=reduction),
        lambda lib: lib.nn.functional.multi_margin_loss(*_lib_args(lib, X[0], np.array([2])),
                                                        reduction=reduction),
        lambda lib: lib.nn.functional.multi_margin_loss(
            *_lib_args(lib, np.array(0.5, np.float32), np.array(0)), reduction=reduction),
        lambda lib: lib.nn.functional.multilabel_margin_loss(*_lib_args(lib, X[0], ML[0]),
                                                             reduction=reduction),
        lambda lib: lib.nn.functional.multilabel_margin_loss(
            *_lib_args(lib, np.array(0.3, np.float32), np.array(0)), reduction=reduction),
    ]
    for i, fn in enumerate(cases):
        ours, theirs = fn(retrograd), fn(torch)
        assert tuple(ours.shape) == tuple(theirs.shape)
        if i < 2 and reduction != "none":  # torch leaves an empty batch's loss uninitialized
            assert ours.item() == 0
            continue
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_multilabel_duplicate_labels_count_twice():
    target = np.array([[0, 0, 2, -1, 1]])
    a = randn(1, 5).astype(np.float64)
    r, t = pair(a, True)
    lo = F.multilabel_margin_loss(r, retrograd.from_numpy(target))
    lt = TF.multilabel_margin_loss(t, torch.from_numpy(target))
    np.testing.assert_allclose(lo.item(), lt.item())
    lo.backward()
    lt.backward()
    np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy())


def test_legacy_reduction_arguments_warn():
    r, t = pair(X)
    with pytest.warns(UserWarning, match="size_average and reduce"):
        ours = F.multi_margin_loss(r, retrograd.from_numpy(T), size_average=False)
    np.testing.assert_allclose(ours.numpy(),
                               TF.multi_margin_loss(t, torch.from_numpy(T), reduction="sum"))


def test_triplet_with_custom_distance_uses_it():
    calls = []

    def dist(x1, x2):
        calls.append(1)
        return (x1 - x2).abs().sum(-1)

    r = [retrograd.from_numpy(randn(3, 4, seed=s)) for s in range(3)]
    t = [torch.from_numpy(randn(3, 4, seed=s)) for s in range(3)]
    ours = F.triplet_margin_with_distance_loss(*r, distance_function=dist, swap=True)
    theirs = TF.triplet_margin_with_distance_loss(
        *t, distance_function=lambda a, b: (a - b).abs().sum(-1), swap=True)
    assert len(calls) == 3
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


LABELS = np.array([1.0, -1.0, 1.0, -1.0], np.float32)
MODULES = {
    "TripletMarginLoss": (lambda nn: nn.TripletMarginLoss(0.5, p=1.0, swap=True),
                          [randn(4, 5, seed=1), randn(4, 5, seed=2), randn(4, 5, seed=3)]),
    "TripletMarginWithDistanceLoss": (
        lambda nn: nn.TripletMarginWithDistanceLoss(margin=2.0, reduction="sum"),
        [randn(4, 5, seed=1), randn(4, 5, seed=2), randn(4, 5, seed=3)]),
    "MultiMarginLoss": (lambda nn: nn.MultiMarginLoss(p=2, margin=0.5), [X, T]),
    "MultiLabelMarginLoss": (lambda nn: nn.MultiLabelMarginLoss(reduction="none"), [X, ML]),
    "MultiLabelSoftMarginLoss": (lambda nn: nn.MultiLabelSoftMarginLoss(),
                                 [X, (X > 0).astype(np.float32)]),
    "SoftMarginLoss": (lambda nn: nn.SoftMarginLoss(reduction="sum"),
                       [randn(4), LABELS]),
    "MarginRankingLoss": (lambda nn: nn.MarginRankingLoss(0.2),
                          [randn(4, seed=1), randn(4, seed=2), LABELS]),
    "HingeEmbeddingLoss": (lambda nn: nn.HingeEmbeddingLoss(0.5), [randn(4), LABELS]),
    "CosineEmbeddingLoss": (lambda nn: nn.CosineEmbeddingLoss(0.1),
                            [randn(4, 5, seed=1), randn(4, 5, seed=2), LABELS]),
    "PoissonNLLLoss": (lambda nn: nn.PoissonNLLLoss(full=True),
                       [randn(4, 3), np.abs(randn(4, 3, seed=5)) * 3]),
    "GaussianNLLLoss": (lambda nn: nn.GaussianNLLLoss(full=True),
                        [randn(4, 3), randn(4, 3, seed=5), np.abs(randn(4, 3, seed=6)) + 0.1]),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_parity_and_repr(name):
    make, inputs = MODULES[name]
    assert repr(make(retrograd.nn)) == repr(make(torch.nn))
    # soft margin refuses a target that requires grad, as torch does
    module_parity(lambda lib: make(lib.nn), inputs, input_grad=name != "SoftMarginLoss")


def test_weighted_module_keeps_weight_as_buffer():
    ours = retrograd.nn.MultiMarginLoss(weight=retrograd.ones(5))
    theirs = torch.nn.MultiMarginLoss(weight=torch.ones(5))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
