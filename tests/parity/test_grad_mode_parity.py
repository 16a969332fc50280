"""Grad modes against torch: decorators (bare, generators, classes), set_grad_enabled, inference
tensors, Variable, multithreading and warn-always flags."""

from __future__ import annotations

import threading
import warnings

import pytest

from tests.parity.harness import both, error_of


def test_generator_holds_mode_across_yields():
    def prog(lib):
        seen = []

        @lib.no_grad()
        def gen():
            for i in range(3):
                seen.append(("in", lib.is_grad_enabled()))
                got = yield i
                seen.append(("sent", got, lib.is_grad_enabled()))
            return "done"

        g = gen()
        with lib.enable_grad():
            item = g.send(None)
            while True:
                seen.append(("caller", lib.is_grad_enabled()))
                try:
                    item = g.send(item * 10)
                except StopIteration as stop:
                    seen.append(("stop", stop.value))
                    break
        return seen

    both(prog)


def test_generator_throw_and_close_run_in_mode():
    def prog(lib):
        seen = []

        @lib.enable_grad()
        def gen():
            for i in range(5):
                try:
                    yield i
                except ValueError:
                    seen.append(("throw", lib.is_grad_enabled()))
                except GeneratorExit:
                    seen.append(("close", lib.is_grad_enabled()))
                    raise

        with lib.no_grad():
            g = gen()
            next(g)
            seen.append(g.throw(ValueError))
            seen.append(lib.is_grad_enabled())
            g.close()
            seen.append(lib.is_grad_enabled())
        return seen

    both(prog)


def test_bare_decorators_and_direct_call():
    def prog(lib):
        x = lib.ones(2, requires_grad=True)

        @lib.enable_grad
        def on(t):
            return (t * 2).requires_grad

        @lib.no_grad
        def off(t):
            return (t * 2).requires_grad

        @lib.inference_mode
        def inf(t):
            return lib.is_inference_mode_enabled(), lib.is_inference(t * 2)

        with lib.no_grad():
            a = on(x)
        return a, off(x), lib.no_grad(lambda t: (t * 2).requires_grad)(x), inf(x), \
            lib.inference_mode(mode=False)(lambda: lib.is_inference_mode_enabled())()

    both(prog)


def test_class_decoration_warns_and_applies_to_construction_only():
    def prog(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")

            @lib.no_grad()
            class Foo:
                def __init__(self) -> None:
                    self.at_init = lib.is_grad_enabled()

                def later(self):
                    return lib.is_grad_enabled()

            foo = Foo()
        return [(type(x.message).__name__, str(x.message)) for x in w], foo.at_init, foo.later()

    both(prog)


def test_set_grad_enabled_call_decorator_and_errors():
    def prog(lib):
        out = []
        obj = lib.set_grad_enabled(False)
        out.append(lib.is_grad_enabled())
        fn = obj(lambda t: (t * 2).requires_grad)
        out.append(lib.is_grad_enabled())
        out.append(fn(lib.ones(1, requires_grad=True)))
        out.append(repr(lib.set_grad_enabled(True)))
        with lib.set_grad_enabled(False):
            out.append(lib.is_grad_enabled())
        out.append(lib.is_grad_enabled())
        out.append(error_of(lib.set_grad_enabled, 1))
        out.append(error_of(lib.set_grad_enabled, None))
        out.append(lib.autograd.grad_mode.set_grad_enabled is lib.set_grad_enabled)
        return out

    both(prog)


def test_is_inference():
    def prog(lib):
        a = lib.ones(2)
        with lib.inference_mode():
            b = lib.ones(2)
            c = a * 2
        return (lib.is_inference(a), a.is_inference(), lib.is_inference(b), b.is_inference(),
                lib.is_inference(c), error_of(lib.is_inference, 3))

    both(prog)


def test_variable_constructor():
    def prog(lib):
        V = lib.autograd.Variable
        t = lib.ones(2)
        v = V(t)
        v.add_(1)
        r = V(t, requires_grad=True)
        y = lib.ones(2, requires_grad=True) * 2
        w = V(y, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            vol = V(t, volatile=True)
        return (t, v._version, t._version, v is t, type(v).__name__, r.requires_grad, r.is_leaf,
                w.is_leaf, w.grad_fn is None, vol.requires_grad,
                [str(x.message) for x in caught],
                isinstance(t, V), isinstance(3, V), V().shape,
                error_of(V, 3), error_of(V, lib.ones(2, dtype=lib.int64), requires_grad=True))

    both(prog)


def test_queue_callback_through_execution_engine():
    def prog(lib):
        called = []

        class MyFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                def later():
                    called.append("final")
                    lib.autograd.Variable._execution_engine.queue_callback(
                        lambda: called.append("added"))
                lib.autograd.Variable._execution_engine.queue_callback(later)
                called.append("backward")
                return g

        MyFunc.apply(lib.ones(2, requires_grad=True)).sum().backward()
        outside = error_of(lib.autograd.Variable._execution_engine.queue_callback, print)
        return called, outside

    both(prog)


def test_multithreading_flag():
    def prog(lib):
        out = []
        with lib.autograd.set_multithreading_enabled(False):
            out.append(lib.autograd.is_multithreading_enabled())
            seen = []
            t = threading.Thread(target=lambda: seen.append(
                lib.autograd.is_multithreading_enabled()))
            t.start()
            t.join()
            out.append(seen)
        out.append(lib.autograd.is_multithreading_enabled())
        lib.autograd.set_multithreading_enabled(False)
        out.append(lib.autograd.is_multithreading_enabled())
        lib.autograd.set_multithreading_enabled(True)
        out.append(lib.autograd.is_multithreading_enabled())
        return out

    both(prog)


@pytest.mark.parametrize("flag", [True, False])
def test_warn_always_flag(flag):
    def prog(lib):
        before = lib.is_warn_always_enabled()
        lib.set_warn_always(flag)
        now = lib.is_warn_always_enabled()
        lib.set_warn_always(before)
        return before, now

    both(prog)
