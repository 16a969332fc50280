"""nll_loss's gradient under vmap (batch_rules._nll_grad_input_batched): per-example gradients
and second derivatives of nll_loss / cross_entropy over every reduction, class weights,
ignored targets and input ranks, equal to torch.func's; and to the op-by-op form it replaces."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd._ops import loss as loss_ops
from tests.func._parity import LIBS, same

# (per-example input shape, per-example target shape)
SHAPES = [((5,), ()), ((3, 5), (3,)), ((2, 5, 4), (2, 4))]


def _data(lib, shape: tuple, target_shape: tuple, batch: int = 4):
    rs = np.random.RandomState(7)
    x = lib.tensor(rs.randn(batch, *shape))
    t = rs.randint(0, 5, (batch, *target_shape))
    t.reshape(-1)[::3] = 2  # class 2 is ignored in the ignore_index cases
    w = lib.tensor(rs.rand(5) + 0.5)
    return x, lib.tensor(t), w


def _per_example_grads(lib, shape, target_shape, reduction, weighted, ignore, order):
    x, t, w = _data(lib, shape, target_shape)
    F = lib.nn.functional

    def loss(xi, ti):
        out = F.nll_loss(F.log_softmax(xi, dim=0 if len(shape) == 1 else 1), ti,
                         weight=w if weighted else None, reduction=reduction,
                         ignore_index=2 if ignore else -100)
        return out.sum()

    fn = lib.func.grad(loss) if order == 1 else lib.func.hessian(loss)
    return lib.func.vmap(fn)(x, t)


@pytest.mark.parametrize("shape,target_shape", SHAPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
def test_per_example_gradients_match_torch(shape, target_shape, reduction, weighted, ignore):
    ours, theirs = (_per_example_grads(lib, shape, target_shape, reduction, weighted, ignore, 1)
                    for lib in LIBS)
    same(ours, theirs, atol=1e-10)


# (a one-target example whose target is ignored has a nan mean loss, a zero Hessian)
@pytest.mark.parametrize("shape,target_shape,ignore", [((5,), (), False), ((5,), (), True),
                                                       ((3, 5), (3,), True)])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_per_example_hessians_match_torch(shape, target_shape, ignore, reduction):
    ours, theirs = (_per_example_grads(lib, shape, target_shape, reduction, True, ignore, 2)
                    for lib in LIBS)
    same(ours, theirs, atol=1e-10)


def test_an_example_with_every_target_ignored_gets_a_zero_gradient():
    # its mean is over no target (a nan loss), but no position is a target: zeros, as torch
    for lib in LIBS:
        x = lib.tensor(np.zeros((2, 3, 5)))
        t = lib.tensor(np.full((2, 3), 2))
        nll = lib.nn.functional.nll_loss
        g = lib.func.vmap(lib.func.grad(
            lambda xi, ti, nll=nll: nll(xi, ti, ignore_index=2)))(x, t)
        assert tuple(g.shape) == (2, 3, 5)
        assert np.all(g.detach().numpy() == 0)


def test_batched_formula_equals_the_op_by_op_form(monkeypatch):
    fast = _per_example_grads(retrograd, (3, 5), (3,), "mean", True, True, 1)
    monkeypatch.setattr(loss_ops, "nll_grad_input_for", {})
    slow = _per_example_grads(retrograd, (3, 5), (3,), "mean", True, True, 1)
    np.testing.assert_allclose(fast.numpy(), slow.numpy(), rtol=1e-15, atol=0)


def test_hessian_of_a_mean_over_ignored_targets_is_zero_as_torch():
    # the total weight is 0: the gradient's scale is infinite where no target counts
    outs = []
    for lib in LIBS:
        F = lib.nn.functional
        x = lib.tensor(np.random.RandomState(0).randn(5))
        w = lib.tensor(np.random.RandomState(1).rand(5) + 0.5)
        outs.append(lib.func.hessian(lambda a, F=F, w=w, lib=lib: F.nll_loss(
            F.log_softmax(a, 0), lib.tensor(2), weight=w, ignore_index=2))(x))
    same(outs[0], outs[1], atol=0)
    assert not np.isnan(outs[0].numpy()).any()
