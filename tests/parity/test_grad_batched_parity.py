"""autograd.grad(..., is_grads_batched=True) and grad_outputs of another real dtype, against
torch: values, shapes, None/materialized gradients, errors."""

from __future__ import annotations

import pytest

from tests.parity.harness import both, error_of


def _describe(lib, x):
    if isinstance(x, lib.Tensor):
        return (x, x.requires_grad)
    if isinstance(x, (tuple, list)):
        return tuple(_describe(lib, v) for v in x)
    if isinstance(x, dict):
        return {k: _describe(lib, v) for k, v in x.items()}
    return x


@pytest.mark.parametrize("create_graph", [False, True])
def test_batched_values_and_graphs(create_graph):
    def prog(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=lib.float64,
                       requires_grad=True)
        y = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        unused = lib.ones(2, requires_grad=True)
        a, b = (x.sin() * y).sum(0), (x @ y).exp()
        g = (lib.arange(12.0, dtype=lib.float64).reshape(4, 3),
             lib.arange(8.0, dtype=lib.float64).reshape(4, 2))
        kw = dict(is_grads_batched=True, retain_graph=True, create_graph=create_graph)
        res = [
            lib.autograd.grad((a, b), (x, y), g, **kw),
            lib.autograd.grad(a, x, g[0], **kw),
            lib.autograd.grad(b.sum(), (x, y), lib.tensor([1.0, -2.0], dtype=lib.float64),
                              **kw),
            lib.autograd.grad((a, b), (x, unused), g, allow_unused=True, **kw),
            lib.autograd.grad((a, b), (x, unused), g, materialize_grads=True, **kw),
            lib.autograd.grad((a, b), {"x": x, "y": y}, g, **kw),
            error_of(lib.autograd.grad, (a, b), (x, unused), g, **kw),
        ]
        if create_graph:
            gx = res[0][0]
            res.append(lib.autograd.grad(gx.pow(2).sum(), (x, y)))
        return _describe(lib, res)

    both(prog, rtol=1e-7, atol=1e-7)


def test_batched_errors():
    def prog(lib):
        x = lib.randn(2, 2, requires_grad=True)
        out = x.clone()
        grad = lib.autograd.grad
        return (
            error_of(grad, out, (x,), (lib.ones(2, 2),), is_grads_batched=True),
            error_of(grad, x.sum(), (x,), (lib.ones(2).unsqueeze(1),), is_grads_batched=True),
            error_of(grad, (out, out * 2), (x,), (lib.ones(3, 2, 2), lib.ones(4, 2, 2)),
                     is_grads_batched=True),
        )

    both(prog)


def test_batched_graph_is_freed_after_the_last_member():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        out = x.exp()
        first = lib.autograd.grad(out, x, lib.ones(3, 2), is_grads_batched=True)
        return first, error_of(lib.autograd.grad, out, x, lib.ones(2))

    both(prog)


def test_integer_and_bool_grad_outputs_are_taken_in_the_outputs_dtype():
    def prog(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        res = []
        for g in (lib.ones(2, 2, dtype=lib.int64) * 3, lib.ones(2, 2, dtype=lib.bool),
                  lib.ones(2, 2, dtype=lib.float64)):
            res.append(lib.autograd.grad(x * x, x, g))
        (x * 2).backward(lib.ones(2, 2, dtype=lib.int32))
        res.append(x.grad)
        return res

    both(prog)


def test_one_backward_pass_for_the_whole_batch():
    # the batch runs as one vmapped pass (as torch's does): a hook inside fires once
    def prog(lib):
        calls = []
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: calls.append(tuple(g.shape)))
        (g,) = lib.autograd.grad(y.sin(), x, lib.eye(3), is_grads_batched=True)
        return g, len(calls)

    both(prog)
