"""Thousands of nested (reentrant) backward calls, as PyTorch's engine survives them
(NOTE [Deep reentrant backward])."""

import threading

from tests.parity.harness import both


def deep_program(lib, depth: float):
    calls = []

    class DeepReentrant(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with lib.enable_grad():
                ctx.x = x.detach().requires_grad_(True) - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, grad):
            calls.append(1)
            if ctx.x < 0:
                return grad
            with lib.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return grad * 2

    v = lib.tensor(depth, requires_grad=True)
    DeepReentrant.apply(v).sum().backward()
    return len(calls), v.grad


def test_two_thousand_nested_backward_calls():
    both(lambda lib: deep_program(lib, 2000.0))


def test_nested_calls_keep_the_callers_grad_mode_and_leave_no_thread_behind():
    before = threading.active_count()

    def prog(lib):
        out = deep_program(lib, 300.0)
        return out, lib.is_grad_enabled()

    both(prog)
    assert threading.active_count() == before
