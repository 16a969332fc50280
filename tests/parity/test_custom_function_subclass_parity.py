"""A custom Function that returns its input as-is, for a Tensor subclass that defines
__torch_function__: the output is made by view_as through that override (grad mode off), so
the subclass carries over, as in torch."""

from __future__ import annotations

from tests.parity.harness import both


def _program(lib):
    calls = []

    class Wrapper(lib.Tensor):
        def __init__(self, inner):
            super().__init__()
            self._inner = inner

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append((func.__name__, lib.is_grad_enabled(), [type(a).__name__ for a in args]))
            args = tuple(a._inner if isinstance(a, cls) else a for a in args)
            out = func(*args, **(kwargs or {}))
            return cls(out) if isinstance(out, lib.Tensor) else out

    class Identity(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    return Wrapper, Identity, calls


def test_returned_input_keeps_its_subclass_through_torch_function():
    def prog(lib):
        wrapper, identity, calls = _program(lib)
        x = wrapper(lib.arange(6.0).reshape(2, 3))
        y = identity.apply(x)
        return (type(y).__name__, y is x, isinstance(y, wrapper), y._inner, calls,
                type(y._inner).__name__)

    both(prog)


def test_a_plain_tensor_returned_as_is_is_still_a_view_with_the_functions_node():
    def prog(lib):
        _, identity, calls = _program(lib)
        x = lib.arange(3.0, requires_grad=True)
        y = identity.apply(x)
        y.sum().backward()
        return type(y).__name__, y._is_view(), y.grad_fn.name(), x.grad, calls

    both(prog)
