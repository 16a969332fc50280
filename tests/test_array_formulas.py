"""Array formulas (NOTE [Array formulas]): the NumPy-level copies of hot ops' derivatives that
backward runs when it builds no graph must agree with the Tensor formulas they copy."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd._ops.registry import OPS
from retrograd.utils._python_dispatch import TorchDispatchMode
from tests.test_ops_generated import GRAD, _func

ARRAY_OPS = sorted(name for name, op in OPS.items() if op.array_formulas is not None)


def _grads(sample, create_graph: bool):
    f, leaves = _func(sample)
    outs = [o for o in f(*leaves) if o.requires_grad]
    if not outs:
        return None
    rng = np.random.default_rng(3)
    vs = [retrograd.tensor(rng.standard_normal(o.shape), dtype=o.dtype) for o in outs]
    return retrograd.autograd.grad(outs, leaves, vs, allow_unused=True,
                                   create_graph=create_graph)


@pytest.mark.parametrize("sample", GRAD, ids=lambda s: s.id)
def test_array_and_tensor_formulas_agree(sample):
    # create_graph=False runs the array formulas where an op has them, create_graph=True the
    # Tensor formulas; both are gradients of the same function
    fast = _grads(sample, create_graph=False)
    if fast is None:
        pytest.skip("no differentiable outputs")
    ref = _grads(sample, create_graph=True)
    for a, b in zip(fast, ref):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12,
                                       atol=1e-12, equal_nan=True)


def test_hot_ops_have_array_formulas():
    # the ops a training step spends its backward in (bench/overhead.py)
    for name in ("mul.Tensor", "add.Tensor", "sub.Tensor", "div.Tensor", "tanh", "relu",
                 "gelu", "mm", "addmm", "bmm", "t", "view", "expand", "select.int",
                 "slice.Tensor", "sum", "mean", "_softmax", "_log_softmax", "nll_loss_forward",
                 "native_dropout", "embedding", "native_layer_norm", "split.Tensor",
                 "convolution", "max_pool2d_with_indices"):
        assert name in ARRAY_OPS, name


def test_array_formulas_are_declared_like_the_tensor_ones():
    from retrograd._ops.registry import op

    with pytest.raises(ValueError, match="must have the keys of grads"):
        op("_array_keys_test(Tensor self) -> Tensor", np.negative,
           grads={"self": lambda grad: -grad}, array_grads={"other": lambda grad: grad},
           function=False, method=False)
    with pytest.raises(ValueError, match="reads \\['self'\\]"):
        op("_array_reads_test(Tensor self) -> Tensor", np.negative,
           grads={"self": lambda grad: -grad},
           array_grads={"self": lambda grad, self: np.negative(grad)},
           function=False, method=False)


def test_a_dispatch_mode_sees_the_tensor_formulas():
    # under a dispatch mode backward runs Tensor formulas, so the mode sees backward's ops
    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.name())
            return func(*args, **(kwargs or {}))

    x = retrograd.ones(3, requires_grad=True)
    y = (x * x).tanh().sum()
    with Recorder():
        y.backward()
    assert "tanh_backward" in seen and seen.count("mul.Tensor") == 2
    expected = 2 * (1 - np.tanh(1.0) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), [expected] * 3, rtol=1e-6)


def test_a_passed_through_gradient_is_not_stolen_twice():
    # add's array formula hands the incoming gradient to both inputs: the leaves must not end
    # up sharing one array (a later in-place accumulation into one would change the other)
    a = retrograd.zeros(3, requires_grad=True)
    b = retrograd.zeros(3, requires_grad=True)
    (a + b).exp().sum().backward()
    assert a.grad.data_ptr() != b.grad.data_ptr()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones(3))
    (a * 2).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(3, 3.0))
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3))


def test_array_formula_results_keep_the_gradient_contract():
    # a weight's gradient from an array formula is still stolen without a copy when unshared
    w = retrograd.ones(4, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.data_ptr()))
    (w * 3.0).sum().backward()
    assert w.grad.data_ptr() == seen[0]
    np.testing.assert_array_equal(w.grad.numpy(), np.full(4, 3.0))


def test_masked_gradients_zero_non_finite_values_outside_the_mask():
    # where's and clamp's array formulas multiply by the mask; inf * 0 would be nan there,
    # where torch (and the Tensor formula) give 0
    def prog(lib):
        x = lib.tensor([1.0, 5.0, -3.0], requires_grad=True)
        y = lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
        out = lib.where(x > 0, x, y).clamp(-1.0, 3.0)
        out.backward(lib.tensor([float("inf"), float("nan"), 1.0]))
        return x.grad, y.grad

    from tests.parity.harness import both

    both(prog)
