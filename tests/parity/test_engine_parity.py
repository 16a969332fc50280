"""The engine's observable behaviour, program by program, against torch."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of


def leaf(lib, values, dtype="float32"):
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)


def test_backward_accumulates_across_calls():
    def prog(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        (x * x).sum().backward()
        first = x.grad.clone()
        (x * 3).sum().backward()
        return first, x.grad, x.is_leaf, x.grad.requires_grad

    both(prog)


def test_node_names_and_next_functions_shape():
    def prog(lib):
        x = leaf(lib, [1.0, 2.0])
        y = leaf(lib, [3.0, 4.0])
        z = (x * y + 2).exp().sum()
        fns = []
        fn = z.grad_fn
        while fn is not None:
            fns.append((type(fn).__name__, [None if f is None else type(f).__name__
                                            for f, _ in fn.next_functions],
                        [nr for _, nr in fn.next_functions]))
            nxt = [f for f, _ in fn.next_functions if f is not None and
                   type(f).__name__ != "AccumulateGrad"]
            fn = nxt[0] if nxt else None
        acc = (x * y).grad_fn.next_functions[0][0]
        return fns, acc.name(), acc.variable is x, repr(z).split(",")[-1]

    both(prog)


def test_scalar_constant_gets_a_none_edge():
    def prog(lib):
        x = leaf(lib, [1.0, 2.0])
        return [(f is None, nr) for f, nr in (x * 2).grad_fn.next_functions]

    both(prog)


@pytest.mark.parametrize("case", ["nonscalar", "no_grad_fn", "twice", "shape", "int_output"])
def test_backward_errors(case):
    def prog(lib):
        x = leaf(lib, [1.0, 2.0])
        if case == "nonscalar":
            return error_of(lambda: (x * 2).backward())
        if case == "no_grad_fn":
            return error_of(lambda: lib.ones(3).sum().backward())
        if case == "twice":
            y = (x.exp() * x).sum()
            y.backward()
            return error_of(y.backward)
        if case == "shape":
            return error_of(lambda: (x * 2).backward(lib.ones(3)))
        return error_of(lambda: lib.autograd.grad((x * 2).sum(), lib.ones(2)))

    both(prog)


def test_retain_graph_allows_second_backward():
    def prog(lib):
        x = leaf(lib, [1.0, 2.0])
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad

    both(prog)


def test_grad_returns_without_accumulating():
    def prog(lib):
        x = leaf(lib, [1.0, 2.0])
        w = leaf(lib, [0.5, -1.0])
        y = (x * w).tanh().sum()
        gx, gw = lib.autograd.grad(y, [x, w])
        return gx, gw, x.grad is None, w.grad is None

    both(prog)


def test_grad_unused_inputs():
    def prog(lib):
        x = leaf(lib, [1.0, 2.0])
        u = leaf(lib, [5.0])
        y = (x * 2).sum()
        err = error_of(lambda: lib.autograd.grad(y, [x, u], retain_graph=True))
        allowed = lib.autograd.grad(y, [x, u], allow_unused=True, retain_graph=True)
        mat = lib.autograd.grad(y, [x, u], materialize_grads=True)
        return err, allowed[1] is None, mat[1]

    both(prog)


def test_create_graph_second_derivative():
    def prog(lib):
        x = leaf(lib, [0.5, -1.5], "float64")
        y = (x * x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg, type(g.grad_fn).__name__

    both(prog)


def test_backward_inputs_only_accumulates_those():
    def prog(lib):
        x = leaf(lib, [1.0, 2.0])
        w = leaf(lib, [3.0, 4.0])
        h = x * w
        out = (h * h).sum()
        out.backward(inputs=[w, h])
        return x.grad is None, w.grad, h.grad

    both(prog)


def test_non_leaf_grad_warning_and_retain_grad():
    def prog(lib):
        import warnings

        x = leaf(lib, [1.0, 2.0])
        h = x * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _ = h.grad
        h2 = x * 3
        h2.retain_grad()
        (h2 * h2).sum().backward()
        return len(w), h2.grad, h2.retains_grad, h.retains_grad

    both(prog)


def test_requires_grad_errors():
    def prog(lib):
        x = leaf(lib, [1.0])
        y = x * 2
        return (error_of(lambda: setattr(y, "requires_grad", False)),
                error_of(lambda: lib.tensor([1, 2]).requires_grad_()),
                error_of(lambda: x.numpy()),
                error_of(lambda: lib.tensor([1.0, 2.0]).retain_grad()))

    both(prog)


def test_grad_modes_and_decorators():
    def prog(lib):
        x = leaf(lib, [1.0])
        with lib.no_grad():
            a = x * 2
            with lib.enable_grad():
                b = x * 2
        lib.set_grad_enabled(False)
        c = x * 2
        lib.set_grad_enabled(True)

        @lib.no_grad()
        def f(t):
            return t * 2

        with lib.set_grad_enabled(False):
            d = x * 2
        return (a.requires_grad, b.requires_grad, c.requires_grad, f(x).requires_grad,
                d.requires_grad, lib.is_grad_enabled())

    both(prog)


def test_grad_mode_is_thread_local():
    seen = {}

    def worker():
        seen["thread"] = retrograd.is_grad_enabled()

    with retrograd.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        seen["main"] = retrograd.is_grad_enabled()
    assert seen == {"thread": True, "main": False}


def test_broadcast_gradient_sums_back():
    def prog(lib):
        a = leaf(lib, np.arange(6.0).reshape(2, 3).tolist())
        b = leaf(lib, [[1.0], [2.0]])
        c = leaf(lib, 2.0)
        ((a * b + c) ** 1).sum().backward() if False else (a * b + c).sum().backward()
        return a.grad, b.grad, c.grad

    both(prog)


def test_diamond_graph_accumulates_in_buffer():
    def prog(lib):
        x = leaf(lib, [1.0, -2.0])
        y = x.exp()
        z = y * y + y.tanh() - y
        z.sum().backward()
        return x.grad

    both(prog)


def test_dtype_of_grad_follows_input():
    def prog(lib):
        a = leaf(lib, [1.0, 2.0], "float16")
        b = leaf(lib, [1.0, 2.0], "float32")
        (a * b).sum().backward()
        return a.grad, b.grad

    both(prog)


def test_deep_chain_has_no_recursion_limit():
    x = retrograd.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0001
    y.sum().backward()
    assert x.grad.item() == pytest.approx(1.0001 ** 5000, rel=1e-3)


def test_input_buffer_accumulation_never_changes_visible_gradients():
    # the engine adds gradients arriving at one input in place only when nothing else holds
    # the first one: a tensor handed to two inputs, a user's gradient, a hooked gradient
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x + x).mul(3).sum().backward()
        first = x.grad.clone()
        x.grad = None
        g = lib.ones(2)
        (x * 1 + x * 1).backward(g)
        seen = []
        h = x * 2
        h.register_hook(lambda t: seen.append(t))
        (h * 1 + h * 1).sum().backward()
        return first, g, seen[0], x.grad

    both(prog)


def test_broadcast_gradient_of_a_zero_dim_input_keeps_its_shape():
    # a 0-d input broadcast against (1,) and (2, 3): its summed gradient is 0-d again
    def prog(lib):
        x = lib.tensor(2.0, requires_grad=True)
        b = lib.tensor(1.5, requires_grad=True)
        (x * lib.tensor([3.0])).sum().backward()
        (b + lib.ones(2, 3)).sum().backward()
        return x.grad, tuple(x.grad.shape), b.grad, tuple(b.grad.shape)

    both(prog)
