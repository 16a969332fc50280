"""Seed 004: a stage's backward, whole and split, with the cases PyTorch's own tests check."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import retrograd as rg
from retrograd.distributed.pipelining import (
    stage_backward,
    stage_backward_input,
    stage_backward_weight,
)
from retrograd.distributed.pipelining._backward import REQUIRES_OUTPUT_GRADS


def _param(seed, *shape):
    rng = np.random.default_rng(seed)
    return rg.tensor(rng.standard_normal(shape) * 0.5, requires_grad=True)


def _input(seed, *shape, requires_grad=True):
    rng = np.random.default_rng(seed)
    return rg.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


def mlp(x, w1, w2):
    return x.mm(w1).tanh().mm(w2).tanh()


def full_reference(fn, inputs, weights, grad):
    for t in list(inputs) + list(weights):
        t.grad = None
    fn(*inputs, *weights).backward(grad)
    ref = [None if t.grad is None else t.grad.numpy().copy() for t in list(inputs) + weights]
    for t in list(inputs) + list(weights):
        t.grad = None
    return ref


def test_split_equals_full_backward_and_input_pass_leaves_weights_alone():
    w1, w2 = _param(0, 4, 5), _param(1, 5, 3)
    x = _input(2, 2, 4)
    g = _input(3, 2, 3, requires_grad=False)
    ref = full_reference(mlp, [x], [w1, w2], g)
    out = mlp(x, w1, w2)
    dx, groups = stage_backward_input([out], [g], [x], [w1, w2])
    assert w1.grad is None and w2.grad is None
    np.testing.assert_allclose(dx[0].numpy(), ref[0], rtol=1e-12)
    stage_backward_weight([w1, w2], groups)
    np.testing.assert_allclose(w1.grad.numpy(), ref[1], rtol=1e-12)
    np.testing.assert_allclose(w2.grad.numpy(), ref[2], rtol=1e-12)


def test_non_tensor_inputs_and_inputs_without_grad_get_none():
    w = _param(0, 3, 3)
    x = _input(1, 2, 3, requires_grad=False)
    out = x.mm(w).tanh()
    grads = stage_backward(out, rg.ones(2, 3), [x, 5, "label"])
    assert grads == (None, None, None)
    assert w.grad is not None


def test_stage_backward_nested_outputs_and_clears_input_grads():
    w = _param(0, 3, 3)
    x = _input(1, 2, 3)
    h = x.mm(w)
    outputs = {"a": h.tanh(), "b": [h * 2, (h.exp(), 7)]}
    grads = {"a": rg.ones(2, 3), "b": [rg.ones(2, 3), (rg.ones(2, 3), None)]}
    (gx,) = stage_backward(outputs, grads, [x])
    assert x.grad is None  # handed back, not accumulated
    expected = (1 - h.tanh() ** 2 if hasattr(h, "__pow__") else 1 - h.tanh() * h.tanh()) + 2 \
        + h.exp()
    np.testing.assert_allclose(gx.numpy(), (expected.detach().mm(w.detach().t())).numpy(),
                               rtol=1e-12)


def test_stage_backward_wraps_errors_with_debug_info():
    w = _param(0, 3, 3)
    x = _input(1, 2, 3)
    out = x.mm(w)
    with pytest.raises(RuntimeError, match="Failed to run stage backward") as info:
        stage_backward(out, rg.ones(4, 4), [x])
    assert "Stage output: Tensor(shape=[2, 3]" in str(info.value)


def test_ten_microbatches_accumulate():
    w1, w2 = _param(0, 4, 5), _param(1, 5, 3)
    xs = [_input(10 + i, 2, 4) for i in range(10)]
    g = rg.ones(2, 3)
    total = [np.zeros((4, 5)), np.zeros((5, 3))]
    for x in xs:
        ref = full_reference(mlp, [x], [w1, w2], g)
        total[0] += ref[1]
        total[1] += ref[2]
    all_groups = []
    for x in xs:
        _, groups = stage_backward_input([mlp(x, w1, w2)], [g], [x], [w1, w2])
        all_groups.append(groups)
    for groups in all_groups:
        stage_backward_weight([w1, w2], groups)
    np.testing.assert_allclose(w1.grad.numpy(), total[0], rtol=1e-10)
    np.testing.assert_allclose(w2.grad.numpy(), total[1], rtol=1e-10)


def test_weight_used_twice_is_not_double_counted():
    w = _param(0, 3, 3)
    x = _input(1, 2, 3)

    def fn(x, w):
        return (x.mm(w).tanh() + x.mm(w) * 2).mm(w)

    g = rg.ones(2, 3)
    ref = full_reference(fn, [x], [w], g)
    _, groups = stage_backward_input([fn(x, w)], [g], [x], [w])
    stage_backward_weight([w], groups)
    np.testing.assert_allclose(w.grad.numpy(), ref[1], rtol=1e-12)


def test_intermediate_with_several_outputs():
    class TwoOut(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    w = _param(0, 3, 3)
    x = _input(1, 2, 3)

    def fn(x, w):
        p, q = TwoOut.apply(x.tanh())
        return p.mm(w) + q.mm(w).exp()

    g = rg.ones(2, 3)
    ref = full_reference(fn, [x], [w], g)
    dx, groups = stage_backward_input([fn(x, w)], [g], [x], [w])
    stage_backward_weight([w], groups)
    np.testing.assert_allclose(w.grad.numpy(), ref[1], rtol=1e-12)
    np.testing.assert_allclose(dx[0].numpy(), ref[0], rtol=1e-12)


def test_view_output_from_custom_function():
    class ViewOut(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 3)

    w = _param(0, 3, 3)
    x = _input(1, 2, 3)

    def fn(x, w):
        return ViewOut.apply(x.mm(w)).tanh()

    g = rg.ones(6)
    ref = full_reference(fn, [x], [w], g)
    dx, groups = stage_backward_input([fn(x, w)], [g], [x], [w])
    stage_backward_weight([w], groups)
    np.testing.assert_allclose(w.grad.numpy(), ref[1], rtol=1e-12)


def test_outputs_collected_between_passes_and_graph_freed_after():
    w1, w2 = _param(0, 4, 5), _param(1, 5, 3)
    x = _input(2, 2, 4)
    out = mlp(x, w1, w2)
    out_ref = weakref.ref(out)
    node_ref = weakref.ref(out.grad_fn)
    _, groups = stage_backward_input([out], [rg.ones(2, 3)], [x], [w1, w2])
    del out
    gc.collect()
    assert out_ref() is None  # the output may die before the weight pass
    stage_backward_weight([w1, w2], groups)
    assert w1.grad is not None and w2.grad is not None
    assert all("grads" not in g and "intermediates" not in g for g in groups)
    gc.collect()
    assert node_ref() is None  # the graph is freed after the weight pass


def test_recorded_grads_containing_none():
    w1, w2 = _param(0, 3, 3), _param(1, 3, 3)
    x = _input(2, 2, 3)

    def fn(x, w1, w2):
        return x.mm(w1) + (x.detach() * 0).mm(w2)

    g = rg.ones(2, 3)
    ref = full_reference(fn, [x], [w1, w2], g)
    _, groups = stage_backward_input([fn(x, w1, w2)], [g], [x], [w1, w2])
    stage_backward_weight([w1, w2], groups)
    np.testing.assert_allclose(w1.grad.numpy(), ref[1], rtol=1e-12)


def test_weight_pass_without_input_pass_asserts():
    with pytest.raises(AssertionError, match="requires output gradients"):
        stage_backward_weight([], [{"params": [], "intermediates": []}])
    assert "requires output gradients" in REQUIRES_OUTPUT_GRADS


def test_gradient_edge_outputs_do_not_keep_outputs_alive():
    w = _param(0, 3, 3)
    x = _input(1, 2, 3)
    h = x.mm(w)
    out = h.tanh()
    edge = rg.autograd.graph.get_gradient_edge(out)
    ref = weakref.ref(out)
    del out
    gc.collect()
    assert ref() is None
    (gw,) = rg.autograd.grad(edge, w, grad_outputs=rg.ones(2, 3))
    expected = x.detach().t().mm(1 - h.detach().tanh() * h.detach().tanh())
    np.testing.assert_allclose(gw.numpy(), expected.numpy(), rtol=1e-12)
