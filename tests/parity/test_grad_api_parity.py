"""autograd.grad's argument handling against torch: materialize_grads, dict inputs,
only_inputs."""

from __future__ import annotations

import warnings

from tests.parity.harness import both, error_of


def test_materialize_grads_zeros_take_part_in_higher_order():
    def prog(lib):
        x = lib.tensor(0.5, requires_grad=True)
        a = lib.tensor(1.0, requires_grad=True)
        y = x * a
        (dydx,) = lib.autograd.grad(y, x, create_graph=True)
        none = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
        (d2,) = lib.autograd.grad(dydx, x, create_graph=True, materialize_grads=True)
        (d3,) = lib.autograd.grad(d2, x, materialize_grads=True)
        (plain,) = lib.autograd.grad(dydx, x, materialize_grads=True)
        return (none, d2, d2.requires_grad, d3, d3.requires_grad, plain.requires_grad,
                error_of(lib.autograd.grad, y, x, allow_unused=False, materialize_grads=True))

    both(prog)


def test_materialize_grads_refuses_gradient_edges():
    def prog(lib):
        x = lib.rand(2, requires_grad=True).clone()
        y = lib.rand(2, requires_grad=True).clone()
        edge_y = lib.autograd.graph.get_gradient_edge(y)
        out = x.clone().sum()
        return (error_of(lib.autograd.grad, out, (x, edge_y), allow_unused=True,
                         materialize_grads=True, retain_graph=True),
                lib.autograd.grad(out, (x, edge_y), allow_unused=True)[1])

    both(prog)


def test_dict_inputs_and_only_inputs_warning():
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        w = lib.full((2,), 3.0, requires_grad=True)
        out = (x * w).sum()
        grads = lib.autograd.grad(out, {"x": x, "w": w}, retain_graph=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.autograd.grad(out, x, only_inputs=False)
        return (sorted(grads), grads["x"], grads["w"],
                [(type(m.message).__name__, str(m.message)) for m in caught])

    both(prog)
