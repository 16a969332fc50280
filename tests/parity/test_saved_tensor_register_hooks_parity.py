"""SavedTensor.register_hooks's argument errors (torch's binding takes exactly two callables,
positionally) and a custom Function's saved tensors after they were freed, compared with torch."""

from __future__ import annotations

import re

import pytest

from tests.parity.harness import both, error_of


def _without_addresses(result):
    if result[0] == "raised":
        return result[:2] + (re.sub(r" at 0x[0-9a-f]+", "", result[2]),)
    return result


CALLS = {
    "one": lambda f: ((f,), {}),
    "not_callable": lambda f: ((1, 1), {}),
    "none": lambda f: ((), {}),
    "three": lambda f: ((f, f, f), {}),
    "keywords": lambda f: ((), {"pack_hook": f, "unpack_hook": f}),
    "second_not_callable": lambda f: ((f, 1), {}),
}


def _identity(x):
    return x


@pytest.mark.parametrize("name", list(CALLS))
def test_register_hooks_argument_errors(name):
    def prog(lib):
        a = lib.randn(3, requires_grad=True)
        saved = (a * a).grad_fn._raw_saved_self
        args, kwargs = CALLS[name](_identity)
        msg = _without_addresses(error_of(saved.register_hooks, *args, **kwargs))
        return msg, error_of(saved.register_hooks, _identity, _identity)

    both(prog)


def test_custom_function_saved_tensors_after_release():
    def prog(lib):
        def make(save):
            class MyFn(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    if save:
                        ctx.save_for_backward(x, None)
                    return x * 1

                @staticmethod
                def backward(ctx, g):
                    return g

            return MyFn

        a = lib.randn(5, requires_grad=True)
        out = []
        for save in (True, False):
            y = make(save).apply(a)
            raw = y.grad_fn._raw_saved_tensors
            out.append((len(raw), [type(s).__name__ == "SavedTensor" or
                                   isinstance(s, lib._C._autograd.SavedTensor) for s in raw],
                        y.grad_fn.saved_tensors[1:] if save else y.grad_fn.saved_tensors))
            if save:
                out.append(error_of(raw[1].register_hooks, _identity, _identity))
            y.sum().backward()
            node = y.grad_fn
            out.append(error_of(getattr, node, "_raw_saved_tensors"))
            out.append(error_of(getattr, node, "saved_tensors"))
        return out

    both(prog)
