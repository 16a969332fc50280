"""retrograd.library (torch.library): user ops through ops.<ns>, dispatch modes, autograd and
selective checkpointing, against torch."""


import functools
import importlib
import itertools

import pytest

import retrograd
from tests.parity.harness import both, error_of

_names = itertools.count()


def _ns() -> str:
    # each program defines its ops in a fresh namespace (torch keeps custom_op's registrations)
    return f"rgtest{next(_names)}"


def _logging_mode(lib):
    pd = importlib.import_module(lib.__name__ + ".utils._python_dispatch")

    class Log(pd.TorchDispatchMode):
        def __init__(self):
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    return Log()


def test_define_and_impl_keys():
    ns = _ns()

    def prog(lib):
        with lib.library._scoped_library(ns, "FRAGMENT") as m:
            m.define("twice(Tensor x, float k=2.0) -> Tensor")
            m.impl("twice", lambda x, k=2.0: x * k, "CompositeImplicitAutograd")
            m.define("cube(Tensor x) -> Tensor")
            m.impl("cube", lambda x: x * x * x, "CPU")
            ops = getattr(lib.ops, ns)
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            log = _logging_mode(lib)
            plain = x.detach()
            with log:
                ops.twice(x)
                ops.cube.default(plain)
                ops.twice(plain, k=3.0)
            a = ops.twice(x)
            b = ops.cube.default(x)  # no autograd formula: differentiated through its ops
            c = ops.twice(x, k=3.0)
            (a + b + c).sum().backward()
            names = (str(ops.cube.default), ops.cube.default.name(), repr(ops.cube.default),
                     str(ops.cube), ops.cube.default == ops.cube.default)
            seen = [op.replace(ns, "NS") for op in log.ops]
        return a, b, c, x.grad, names[2].replace(ns, "NS"), seen, hasattr(getattr(lib.ops, ns),
                                                                           "cube")

    both(prog)


def test_custom_op_with_autograd_and_non_tensor_output():
    ns = _ns()

    def prog(lib):
        counter = [0]

        @lib.library.custom_op(f"{ns}::sin_extra", mutates_args=())
        def sin_extra(x: lib.Tensor) -> tuple[lib.Tensor, int]:
            counter[0] += 1
            return x.sin(), 2

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, grad, _unused):
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        lib.library.register_autograd(f"{ns}::sin_extra", backward, setup_context=setup_context)
        x = lib.tensor([0.1, 0.7, -1.2], requires_grad=True)
        y, k = getattr(lib.ops, ns).sin_extra(x)
        (y * 3).sum().backward()
        direct, k2 = sin_extra(x.detach())
        return y, k, x.grad, direct, k2, counter[0], repr(sin_extra).replace(ns, "NS")

    both(prog)


def test_custom_op_without_autograd_refuses_backward():
    ns = _ns()

    def prog(lib):
        @lib.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: lib.Tensor) -> lib.Tensor:
            return x.sin()

        x = lib.tensor([0.5], requires_grad=True)
        y = f(x)
        err = error_of(y.sum().backward)
        return y.requires_grad, err[0], err[1], err[2].replace(ns, "NS")

    both(prog)


def test_infer_schema():
    def prog(lib):

        def f(x: lib.Tensor, y: float, z: int, w: list[int], o: lib.Tensor | None = None,
              b: bool = False) -> tuple[lib.Tensor, int]:
            return x, z

        def g(x: lib.Tensor, out: lib.Tensor) -> None:
            pass

        def h(xs: list[lib.Tensor]) -> list[lib.Tensor]:
            return xs

        return (lib.library.infer_schema(f, mutates_args=()),
                lib.library.infer_schema(g, mutates_args=("out",)),
                lib.library.infer_schema(h, mutates_args=()))

    both(prog)


def test_selective_checkpoint_saves_user_op():
    ns = _ns()

    def prog(lib):
        ck = importlib.import_module(lib.__name__ + ".utils.checkpoint")
        counter = [0]

        @lib.library.custom_op(f"{ns}::sin_extra", mutates_args=())
        def sin_extra(x: lib.Tensor) -> tuple[lib.Tensor, int]:
            counter[0] += 1
            return x.sin(), 2

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, grad, _unused):
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        sin_extra.register_autograd(backward, setup_context=setup_context)
        op = getattr(lib.ops, ns).sin_extra

        def fn(x):
            return (op(x)[0] * x.sin().exp()).sin()

        x = lib.tensor([0.3, -0.4, 1.1], requires_grad=True)
        ctx = functools.partial(ck.create_selective_checkpoint_contexts, [op.default])
        out = ck.checkpoint(fn, x, use_reentrant=False, context_fn=ctx)
        grad = lib.autograd.grad(out.sum(), (x,))
        calls_saved = counter[0]
        ref = lib.autograd.grad(fn(x).sum(), (x,))
        out = ck.checkpoint(fn, x, use_reentrant=False)  # without SAC: runs again in backward
        counter[0] = 0
        lib.autograd.grad(out.sum(), (x,))
        return grad, ref, calls_saved, counter[0]

    _, _, saved, recomputed = both(prog)
    assert saved == 1 and recomputed == 1


def test_unknown_op_and_scope_end():
    ns = _ns()

    def prog(lib):
        with lib.library._scoped_library(ns, "FRAGMENT") as m:
            m.define("g(Tensor x) -> Tensor")
            m.impl("g", lambda x: x + 1, "CPU")
            inside = getattr(lib.ops, ns).g(lib.ones(1))
        gone = error_of(lambda: getattr(lib.ops, ns).g)
        return inside, gone[0], gone[1]

    both(prog)


def test_library_is_reachable_as_attribute():
    assert retrograd.library.Library is importlib.import_module("retrograd.library").Library
    with pytest.raises(ValueError):
        retrograd.library.custom_op("x::y", mutates_args="all")(lambda x: x)
