"""A whole training step compiled: loss, autograd.grad and the SGD update of the parameters
(inputs that require grad, written under no_grad). It runs compiled, equals eager step for step,
bumps the parameters' versions as eager's writes do, and writes the new values where the
parameters are. A function that writes such an input and also needs a compiled backward still
runs eagerly, with the reason logged. Values the backward makes from the call's data (nll_loss's
gradient from the targets) are remade at every call; a backward that reads its data in Python
makes the function run eagerly instead of keeping a stale constant."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F

LR = 0.05


def _params(seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    shapes = [(16, 6), (16,), (3, 16), (3,)]
    return [retrograd.tensor(rng.standard_normal(s).astype(np.float32) * 0.3,
                             requires_grad=True) for s in shapes]


def _step(x, y, *params):
    h = F.relu(F.linear(x, params[0], params[1]))
    loss = F.cross_entropy(F.linear(h, params[2], params[3]), y)
    grads = retrograd.autograd.grad(loss, params)
    with retrograd.no_grad():
        for p, g in zip(params, grads):
            p.sub_(g, alpha=LR)
    return loss.detach()


def _data(step: int):
    rng = np.random.default_rng(100 + step)
    return (retrograd.tensor(rng.standard_normal((8, 6)).astype(np.float32)),
            retrograd.tensor(rng.integers(0, 3, 8)))


def test_compiled_step_runs_compiled_and_equals_eager(caplog):
    eager_p, compiled_p = _params(), _params()
    step = retrograd.compile(_step)
    arrays = [p._data for p in compiled_p]
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        for k in range(20):
            x, y = _data(k)
            a = _step(x, y, *eager_p)
            b = step(x, y, *compiled_p)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert "eagerly" not in caplog.text
    assert retrograd.compiler.counters["compiles"] == 1
    for p, q, arr in zip(eager_p, compiled_p, arrays):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        assert q._version == p._version == 20  # one write per step, as eager
        assert q._data is arr  # written where it was, no new memory
        assert q.grad is None and q.requires_grad


def test_the_step_code_writes_the_parameters_in_place():
    step = retrograd.compile(_step)
    x, y = _data(0)
    step(x, y, *_params())
    (source,) = [s for s, _ in retrograd._compiler.cache.MEMORY.values()]
    assert "aten_sub__Tensor(primals_3," in source and "np.array(primals_3" not in source


def test_the_update_scales_a_dying_gradient_in_place():
    # the weights' gradients are matmul results nothing reads after the update: lr * grad is
    # written over the gradient (bit for bit the kernel's product, asserted by the first test)
    # instead of into a temporary as large as the weight
    step = retrograd.compile(_step)
    x, y = _data(0)
    step(x, y, *_params())
    (source,) = [s for s, _ in retrograd._compiler.cache.MEMORY.values()]
    scaled = [line.strip() for line in source.splitlines() if f", {LR}, out=" in line]
    assert len(scaled) == 2, source  # the two weights; the biases' sums are kernel results
    for line in scaled:
        name = line[len("_mul("):line.index(",")]
        assert line == f"_mul({name}, {LR}, out={name})"
        assert f"aten_sub__Tensor(primals_3, {name}, 1)" in source or \
            f"aten_sub__Tensor(primals_5, {name}, 1)" in source


def test_a_gradient_read_after_the_update_is_not_scaled_in_place():
    def step(x, w):
        (g,) = retrograd.autograd.grad((x @ w).tanh().sum(), (w,))
        with retrograd.no_grad():
            w.sub_(g, alpha=LR)
        return g  # still read: the update must leave it as it was

    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    x = retrograd.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    w_eager, w_comp = (retrograd.tensor(w0, requires_grad=True) for _ in range(2))
    compiled = retrograd.compile(step)
    for _ in range(3):
        a, b = step(x, w_eager), compiled(x, w_comp)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_array_equal(w_eager.detach().numpy(), w_comp.detach().numpy())
    (source,) = [s for s, _ in retrograd._compiler.cache.MEMORY.values()]
    assert f", {LR}, out=" not in source and f", {LR})" in source


def test_a_view_still_read_keeps_the_copy():
    def f(w, x):
        v = w.t()
        with retrograd.no_grad():
            w.mul_(2.0)
        return x @ v  # reads the view after the write: sees the new values

    w0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = retrograd.ones(4, 3)
    eager_w, compiled_w = (retrograd.tensor(w0, requires_grad=True) for _ in range(2))
    with retrograd.no_grad():
        a = f(eager_w, x)
        b = retrograd.compile(f)(compiled_w, x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(eager_w.detach().numpy(), compiled_w.detach().numpy())


def test_a_written_input_with_a_compiled_backward_runs_eagerly(caplog):
    def f(w, x):
        out = (x * w).sum()
        with retrograd.no_grad():
            w.add_(1.0)
        return out

    w = retrograd.ones(3, requires_grad=True)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        out = retrograd.compile(f)(w, retrograd.full((3,), 2.0))
    assert "an in-place write to an input that requires grad" in caplog.text
    np.testing.assert_array_equal(w.detach().numpy(), np.full(3, 2.0))
    assert out.item() == 6.0


def _cross_entropy(x, y, w):
    return F.cross_entropy(x @ w, y)


def _inner_grad(x, y, w):
    return retrograd.autograd.grad(_cross_entropy(x, y, w), w)[0]


def _compare_on_new_targets(calls: int, inner: bool) -> None:
    """Gradients of the compiled loss (and, with `inner`, of the compiled function that calls
    autograd.grad itself) equal eager's, each call with new inputs and targets."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    w_eager, w_comp = (retrograd.tensor(w0, requires_grad=True) for _ in range(2))
    loss_c, grad_c = retrograd.compile(_cross_entropy), retrograd.compile(_inner_grad)
    for _ in range(calls):
        x = retrograd.tensor(rng.standard_normal((5, 4)).astype(np.float32))
        y = retrograd.tensor(rng.integers(0, 3, 5))
        (a,) = retrograd.autograd.grad(_cross_entropy(x, y, w_eager), w_eager)
        (b,) = retrograd.autograd.grad(loss_c(x, y, w_comp), w_comp)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        if inner:
            np.testing.assert_array_equal(_inner_grad(x, y, w_eager).numpy(),
                                          grad_c(x, y, w_comp).numpy())


def test_new_targets_give_new_gradients():
    # nll_loss's gradient is made from the targets: compiled, it must be remade every call
    _compare_on_new_targets(4, inner=True)


class _SignMask(retrograd.autograd.Function):
    """A backward that makes a tensor from the data itself, out of the tracer's sight."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * retrograd.tensor((x.detach().numpy() > 0).astype(np.float32))


def test_a_backward_reading_its_data_in_python_runs_eagerly(caplog):
    def f(x):
        return retrograd.autograd.grad(_SignMask.apply(x).sum(), x)[0]

    cf = retrograd.compile(f)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        for values in ([1.0, -1.0, 2.0], [-1.0, 1.0, -2.0]):
            x = retrograd.tensor(values, requires_grad=True)
            np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
    assert "running f eagerly" in caplog.text and "Tensor.numpy()" in caplog.text


def test_verify_catches_a_constant_made_from_integer_inputs(monkeypatch, caplog):
    # nll_loss's gradient made from the target array where the tracer cannot see it (as it was
    # before it became ops under a recording mode): the check on perturbed inputs, which also
    # reorders integer inputs, sees the gradient disagree and the function runs eagerly
    from retrograd._ops import dispatch

    monkeypatch.setattr(dispatch, "only_subclass_mode", lambda: True)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        _compare_on_new_targets(3, inner=False)
    assert "depends on values computed outside the captured ops" in caplog.text


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_cross_entropy_with_ignored_targets_equals_eager_bit_for_bit(reduction):
    rng = np.random.default_rng(1)
    class_weight = retrograd.tensor(rng.random(3).astype(np.float32) + 0.5)

    def f(x, y, w):
        return F.cross_entropy(x @ w, y, weight=class_weight, ignore_index=1,
                               reduction=reduction).sum()

    compiled = retrograd.compile(f)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    w_eager, w_comp = (retrograd.tensor(w0, requires_grad=True) for _ in range(2))
    for _ in range(3):
        x = retrograd.tensor(rng.standard_normal((6, 4)).astype(np.float32))
        y = retrograd.tensor(rng.integers(0, 3, 6))
        (a,) = retrograd.autograd.grad(f(x, y, w_eager), w_eager)
        (b,) = retrograd.autograd.grad(compiled(x, y, w_comp), w_comp)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
