"""Custom autograd Functions against torch: ctx API, saved tensors, names, errors."""

from __future__ import annotations

import warnings

import pytest

import retrograd
from tests.parity.harness import both, error_of, torch_or_skip


def make_functions(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            y = x * k
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * ctx.k, None

    class SplitCtx(lib.autograd.Function):
        @staticmethod
        def forward(x, w):
            return x * w, (x + w).detach()

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w = inputs
            ctx.save_for_backward(x, w)
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, g, g_unused):
            x, w = ctx.saved_tensors
            return g * w, g * x

    class Dirty(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NoMaterialize(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            return (g1 if g1 is not None else 0) + (g2 if g2 is not None else 0) \
                if (g1 is not None or g2 is not None) else None

    class Needs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            ctx.flags = ctx.needs_input_grad
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    return Scale, SplitCtx, Dirty, NoMaterialize, Needs


def test_forward_backward_names_and_edges():
    def prog(lib):
        Scale, *_ = make_functions(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = Scale.apply(x, 3.0)
        y.sum().backward()
        return (type(y.grad_fn).__name__, y.grad_fn.name(), len(y.grad_fn.next_functions),
                x.grad, y.requires_grad, repr(y).split("grad_fn=")[1])

    both(prog)


def test_setup_context_and_non_differentiable_output():
    def prog(lib):
        _, SplitCtx, *_ = make_functions(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        a, b = SplitCtx.apply(x, w)
        a.sum().backward()
        return b.requires_grad, x.grad, w.grad

    both(prog)


def test_mark_dirty_rebases_history():
    def prog(lib):
        _, _, Dirty, *_ = make_functions(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.clone()
        v0 = y._version
        z = Dirty.apply(y)
        z.sum().backward()
        return z is y, y._version > v0, type(y.grad_fn).__name__, x.grad

    both(prog)


def test_mark_dirty_on_leaf_errors():
    def prog(lib):
        _, _, Dirty, *_ = make_functions(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        return error_of(Dirty.apply, x)[:2]

    both(prog)


def test_materialize_grads_off_gives_none():
    def prog(lib):
        *_, NoMaterialize, _ = make_functions(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, _b = NoMaterialize.apply(x)
        a.sum().backward()
        return x.grad

    both(prog)


def test_needs_input_grad():
    def prog(lib):
        *_, Needs = make_functions(lib)
        a = lib.tensor([1.0], requires_grad=True)
        y = Needs.apply(a, lib.tensor([2.0]), 5)
        return y.grad_fn.flags

    both(prog)


def test_wrong_number_of_gradients():
    def prog(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return (g,)

        x = lib.tensor([1.0], requires_grad=True)
        return error_of(lambda: Bad.apply(x, x).sum().backward())

    both(prog)


def test_once_differentiable_double_backward_errors():
    def prog(lib):
        from_mod = lib.autograd.function

        class Once(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @from_mod.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 2 * x

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(Once.apply(x).sum(), x, create_graph=True)
        return g.requires_grad, error_of(lambda: g.sum().backward())

    both(prog)


def test_saved_tensors_freed_after_backward():
    def prog(lib):
        Scale, *_ = make_functions(lib)
        x = lib.tensor([1.0], requires_grad=True)
        y = Scale.apply(x, 2.0)
        y.backward()
        return error_of(lambda: y.grad_fn.saved_tensors)

    both(prog)


def test_returning_input_as_is_gives_a_view():
    def prog(lib):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = lib.tensor([1.0, 2.0], requires_grad=True).clone()
        y = Ident.apply(x)
        return y is x, y._is_view(), type(y.grad_fn).__name__, error_of(lambda: y.mul_(2))[:2]

    both(prog)


def test_gradcheck_of_custom_function():
    Scale, SplitCtx, *_ = make_functions(retrograd)
    x = retrograd.tensor([1.0, 2.0], dtype=retrograd.float64, requires_grad=True)
    w = retrograd.tensor([0.5, -1.0], dtype=retrograd.float64, requires_grad=True)
    assert retrograd.autograd.gradcheck(lambda a: Scale.apply(a, 3.0), (x,))
    assert retrograd.autograd.gradcheck(lambda a, b: SplitCtx.apply(a, b)[0], (x, w))
    assert retrograd.autograd.gradgradcheck(lambda a, b: SplitCtx.apply(a, b)[0], (x, w))


def test_backward_mutating_grad_output_warns():
    class Mutates(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            g.mul_(2)
            return g

    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        (Mutates.apply(x) * 3).sum().backward()
    assert any("Mutates.backward modified its grad_output in place" in str(m.message) for m in w)
    assert x.grad.tolist() == [6.0, 6.0]


def test_function_instantiation_warns():
    torch_or_skip()
    Scale, *_ = make_functions(retrograd)
    with pytest.warns(DeprecationWarning):
        Scale()
