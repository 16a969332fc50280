"""nn.AdaptiveLogSoftmaxWithLoss against torch with the same weights: forward's output and loss
(batched and unbatched targets), their gradients, log_prob, predict, structure and errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.nn_functional_helpers import raises_like

torch = pytest.importorskip("torch")

IN, CLASSES, CUTOFFS = 8, 12, [3, 7, 10]


def _pair(head_bias: bool = False, div_value: float = 2.0, seed: int = 0):
    """A retrograd module and a torch one with the same (random) weights."""
    ours = retrograd.nn.AdaptiveLogSoftmaxWithLoss(IN, CLASSES, CUTOFFS, div_value=div_value,
                                                   head_bias=head_bias)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(IN, CLASSES, CUTOFFS, div_value=div_value,
                                                 head_bias=head_bias)
    rng = np.random.default_rng(seed)
    state = {k: rng.standard_normal(tuple(v.shape)).astype(np.float32)
             for k, v in theirs.state_dict().items()}
    ours.load_state_dict({k: retrograd.from_numpy(v.copy()) for k, v in state.items()})
    theirs.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in state.items()})
    return ours, theirs


def _grads(module) -> dict:
    return {k: None if p.grad is None else p.grad.numpy().copy()
            for k, p in module.named_parameters()}


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("head_bias", [False, True])
@pytest.mark.parametrize("targets", [[0, 5, 11, 2, 8, 3, 9, 7], [1, 2, 0, 2], [10, 11, 10]])
def test_forward_and_gradients(head_bias, targets):
    ours, theirs = _pair(head_bias)
    x = np.random.default_rng(1).standard_normal((len(targets), IN)).astype(np.float32)
    results = []
    for lib, m in ((retrograd, ours), (torch, theirs)):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        out = m(xt, lib.tensor(targets))
        assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
        (out.loss + out.output.sum() * 0.5).backward()
        results.append((out.output.detach().numpy(), out.loss.detach().numpy(),
                        xt.grad.numpy(), _grads(m)))
    for a, b in zip(results[0][:3], results[1][:3]):
        _close(a, b)
    for k, g in results[1][3].items():
        if g is None:  # a cluster no target is in: its projection does not run
            assert results[0][3][k] is None
        else:
            _close(results[0][3][k], g)


@pytest.mark.parametrize("target", [1, 9])
def test_unbatched(target):
    ours, theirs = _pair()
    x = np.random.default_rng(2).standard_normal(IN).astype(np.float32)
    res = []
    for lib, m in ((retrograd, ours), (torch, theirs)):
        out = m(lib.from_numpy(x.copy()), lib.tensor(target))
        res.append((out.output.detach().numpy(), out.loss.detach().numpy()))
    assert res[0][0].shape == res[1][0].shape == ()
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])


def test_log_prob_and_predict():
    ours, theirs = _pair(head_bias=True, seed=3)
    x = np.random.default_rng(4).standard_normal((40, IN)).astype(np.float32) * 3
    lp = [m.log_prob(lib.from_numpy(x.copy())) for lib, m in ((retrograd, ours),
                                                                 (torch, theirs))]
    _close(lp[0].detach().numpy(), lp[1].detach().numpy())
    np.testing.assert_allclose(np.exp(lp[0].detach().numpy()).sum(1), 1, rtol=1e-5)
    pred = [m.predict(lib.from_numpy(x.copy())) for lib, m in ((retrograd, ours),
                                                                 (torch, theirs))]
    np.testing.assert_array_equal(pred[0].numpy(), pred[1].numpy())
    assert pred[0].dtype == retrograd.int64
    # all rows in the shortlist, and none: both of predict's shortcuts
    for rows in (pred[1].numpy() < 3, pred[1].numpy() >= 3):
        if rows.any():
            sub = x[rows]
            a = ours.predict(retrograd.from_numpy(sub.copy())).numpy()
            b = theirs.predict(torch.from_numpy(sub.copy())).numpy()
            np.testing.assert_array_equal(a, b)


def test_structure():
    ours, theirs = _pair(div_value=4.0)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name in ("in_features", "n_classes", "cutoffs", "div_value", "head_bias",
                 "shortlist_size", "n_clusters", "head_size"):
        assert getattr(ours, name) == getattr(theirs, name)


CTOR_ERRORS = {
    "empty": ([],),
    "unsorted": ([5, 3],),
    "zero": ([0, 3],),
    "too_large": ([3, 12],),
    "repeated": ([3, 3],),
    "fraction": ([2.5],),
}


@pytest.mark.parametrize("case", sorted(CTOR_ERRORS))
def test_constructor_errors(case):
    (cutoffs,) = CTOR_ERRORS[case]
    raises_like(lambda: retrograd.nn.AdaptiveLogSoftmaxWithLoss(IN, CLASSES, cutoffs),
                lambda: torch.nn.AdaptiveLogSoftmaxWithLoss(IN, CLASSES, cutoffs))


FORWARD_ERRORS = {
    "batch_mismatch": ((4, IN), [1, 2, 3]),
    "input_3d": ((3, 1, IN), [1, 2, 3]),
    "target_0d_input_2d": ((3, IN), 1),
    "target_2d": ((3, IN), [[1], [2], [3]]),
    "target_high": ((3, IN), [1, 12, 3]),
    "target_negative": ((3, IN), [-1, 2, 3]),
}


@pytest.mark.parametrize("case", sorted(FORWARD_ERRORS))
def test_forward_errors(case):
    shape, target = FORWARD_ERRORS[case]
    ours, theirs = _pair()
    x = np.zeros(shape, np.float32)
    raises_like(lambda: ours(retrograd.from_numpy(x.copy()), retrograd.tensor(target)),
                lambda: theirs(torch.from_numpy(x.copy()), torch.tensor(target)))
