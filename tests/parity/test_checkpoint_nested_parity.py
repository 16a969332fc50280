"""Nested non-reentrant checkpoints, early stop and recomputation counts; against torch."""

from __future__ import annotations

import gc
import importlib
import weakref

import pytest

import retrograd
from tests.parity.harness import both, error_of


def _ck(lib):
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


def _wrappers(lib):
    ck = _ck(lib)

    def grad(fn):
        def wrapper(x):
            with lib.enable_grad():
                out = fn(x)
                (g,) = lib.autograd.grad(out, inputs=(x,), create_graph=True)
            return g

        return wrapper

    def c(fn):
        def wrapped(*args, **kwargs):
            return ck.checkpoint(fn, *args, use_reentrant=False, **kwargs)

        return wrapped

    def total(fn):
        return lambda x: fn(x).sum()

    return grad, c, total


def _cases(lib, fn):
    grad, c, _ = _wrappers(lib)
    return (
        (fn, (c(fn), c(c(fn)))),
        (grad(fn), (grad(c(fn)), grad(c(c(fn))))),
        (grad(grad(fn)), (grad(c(grad(fn))), c(grad(grad(c(fn)))), grad(c(grad(c(fn)))))),
        (grad(grad(grad(fn))), (grad(c(grad(grad(c(fn))))), grad(c(grad(c(grad(c(fn)))))))),
    )


def _f(x):
    return x.sin().exp().sin()


def _g_for(lib):
    def g(x):
        a = x.sin().exp().sin()
        b = x.sin().exp().sin()
        lib.autograd.grad(a, x)  # backward inside the checkpointed forward
        lib.autograd.grad(b, x)
        return x.sin()

    return g


@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("which", ["plain", "grad_inside"])
def test_nested_checkpoints_and_higher_order_grads(early_stop, which):
    def prog(lib):
        x = lib.tensor(0.7, requires_grad=True)
        fn = _f if which == "plain" else _g_for(lib)
        results = []
        with _ck(lib).set_checkpoint_early_stop(early_stop):
            for expected_fn, actual_fns in _cases(lib, fn):
                expected = expected_fn(x)
                results.append(expected)
                for actual_fn in actual_fns:
                    actual = actual_fn(x)
                    assert abs(actual.item() - expected.item()) < 1e-5
                    results.append(actual)
        return results

    both(prog)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_two_children(early_stop):
    def prog(lib):
        grad, c, total = _wrappers(lib)

        def f(x):
            return x.sin().exp().sin()

        def g(x):
            return x.cos().sin().exp()

        def hc(x):
            return c(g)(c(f)(x))

        a = lib.tensor([[0.1, -0.4, 0.3], [0.5, 0.9, -0.2], [1.1, 0.0, -0.7]],
                       requires_grad=True)
        with _ck(lib).set_checkpoint_early_stop(early_stop):
            expected = grad(total(grad(total(lambda x: g(f(x))))))(a)
            first = grad(total(grad(total(c(hc)))))(a)
            second = grad(total(c(grad(total(c(hc))))))(a)
        return expected, first, second

    both(prog)


def _graph_dies(fn) -> bool:
    """Build fn's graph in a scope; afterwards no node of it may be alive (no cycles through
    the checkpoint frames)."""

    class Handle:
        pass

    def scope():
        a = retrograd.tensor(0.3, requires_grad=True)
        out = fn(a)
        refs, seen, todo = [], set(), [out.grad_fn]
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            h = Handle()
            node.metadata["h"] = h
            refs.append(weakref.ref(h))
            todo.extend(f for f, _ in node.next_functions)
        return refs

    gc.disable()
    try:
        refs = scope()
        return all(r() is None for r in refs)
    finally:
        gc.enable()


def test_nested_checkpoint_graphs_are_freed_by_refcount():
    grad, c, total = _wrappers(retrograd)
    assert _graph_dies(c(c(_f)))
    assert _graph_dies(grad(c(grad(c(_f)))))
    assert _graph_dies(grad(total(c(grad(total(c(_f)))))))


@pytest.mark.parametrize("early_stop", [True, False])
def test_non_tensor_inputs_outputs_and_kwargs(early_stop):
    def prog(lib):
        ck = _ck(lib)

        def fn(k, a, b, f):
            return f(k * a * b.exp()), 1, "abcd"

        def kw(a, blah=None):
            out = a.sin().exp()
            if blah is not None:
                out = out * blah
            return out.sin().exp()

        a = lib.tensor(2.0, requires_grad=True)
        b = lib.tensor(3.0, requires_grad=True)
        with ck.set_checkpoint_early_stop(early_stop):
            out, one, s = ck.checkpoint(fn, 3, a, b, lambda x: x.sin(), use_reentrant=False)
            g1 = lib.autograd.grad(out, (a, b))
            out2 = ck.checkpoint(kw, a, blah=b, use_reentrant=False)
            g2 = lib.autograd.grad(out2, (a, b))
        return g1, one, s, g2, lib.autograd.grad(kw(a, blah=b), (a, b))

    both(prog)


@pytest.mark.parametrize("early_stop", [True, False])
def test_hooks_on_original_graph_and_backward_inside_a_hook(early_stop):
    def prog(lib):
        ck = _ck(lib)
        calls = []
        a = lib.tensor(1.0, requires_grad=True)
        with ck.set_checkpoint_early_stop(early_stop):
            out = ck.checkpoint(lambda t: t.sin().cos().sin(), a, use_reentrant=False)
        out.grad_fn.next_functions[0][0].register_hook(lambda *_: calls.append(1))
        out.backward()

        def fn(t):
            x = t.sin().cos()
            return x, x.sin()

        b = lib.tensor(1.0, requires_grad=True)
        with ck.set_checkpoint_early_stop(early_stop):
            x, out = ck.checkpoint(fn, b, use_reentrant=False)
        out.grad_fn.register_hook(lambda *_: x.backward(retain_graph=True))
        out.backward(retain_graph=True)
        return len(calls), a.grad, b.grad

    both(prog)


def test_early_stop_recomputation_counts():
    def prog(lib):
        ck = _ck(lib)
        counts = []
        counter = [0]

        def clone(x):
            counter[0] += 1
            return x.clone()

        def fn(x):
            return clone(x.sin().cos())  # clone saves nothing: only reached without early stop

        for early in (None, False, True):
            counter[0] = 0
            a = lib.tensor(1.0, requires_grad=True)
            if early is None:
                out = ck.checkpoint(fn, a, use_reentrant=False)
            else:
                with ck.set_checkpoint_early_stop(early):
                    out = ck.checkpoint(fn, a, use_reentrant=False)
            out.backward()  # outside the context manager: its setting was taken in forward
            counts.append(counter[0])
        # the early_stop argument, and the context manager overriding it
        counter[0] = 0
        out = ck.checkpoint(fn, lib.tensor(1.0, requires_grad=True), use_reentrant=False,
                            early_stop=False)
        out.backward()
        counts.append(counter[0])
        counter[0] = 0
        with ck.set_checkpoint_early_stop(True):
            out = ck.checkpoint(fn, lib.tensor(1.0, requires_grad=True), use_reentrant=False,
                                early_stop=False)
        out.backward()
        counts.append(counter[0])
        return counts

    assert both(prog) == [1, 2, 1, 2, 1]


def test_recomputation_counts_when_nothing_or_only_the_input_is_saved():
    def prog(lib):
        ck = _ck(lib)
        counts = []
        for body in (lambda x: x.sin(), lambda x: x.clone()):
            for early in (True, False):
                counter = [0]

                def fn(x, body=body, counter=counter):
                    counter[0] += 1
                    return body(x)

                a = lib.tensor(1.0, requires_grad=True)
                with ck.set_checkpoint_early_stop(early):
                    out = ck.checkpoint(fn, a, use_reentrant=False)
                out.backward()
                counts.append(counter[0])
        return counts

    assert both(prog) == [2, 2, 1, 1]


def test_saved_tensors_outside_backward_recompute_each_time_then_are_freed():
    def prog(lib):
        ck = _ck(lib)
        count = [0]

        def foo(a):
            count[0] += 1
            return (a * (a * a)).exp()

        a = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        d = ck.checkpoint(foo, a, use_reentrant=False)
        counts = [count[0]]
        first = d.grad_fn._saved_result
        counts.append(count[0])
        second = d.grad_fn._saved_result
        counts.append(count[0])
        d.sum().backward()
        counts.append(count[0])
        return counts, first, second, error_of(lambda: d.grad_fn._saved_result)

    both(prog)


def test_unpacking_a_recomputed_tensor_twice_in_one_backward_raises():
    def prog(lib):
        ck = _ck(lib)
        errors = []

        class MyFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                w = x * y
                ctx.save_for_backward(x, y, w)
                return w + w

            @staticmethod
            def backward(ctx, grad_out):
                x, y, w = ctx.saved_tensors
                errors.append(error_of(lambda: ctx.saved_tensors))
                return grad_out * y * 2, grad_out * x * 2

        x = lib.tensor(1.0, requires_grad=True)
        y = lib.tensor(2.0, requires_grad=True)
        out = ck.checkpoint(lambda a, b: MyFunc.apply(a * b, b * b), x, y, use_reentrant=False)
        out.backward()
        return errors, x.grad, y.grad

    both(prog)


def test_double_backward_through_checkpoint():
    def prog(lib):
        ck = _ck(lib)
        x = lib.tensor([0.3, -1.2, 0.8], requires_grad=True)
        y = ck.checkpoint(lambda t: (t.sin() * t.exp()).sum(), x, use_reentrant=False)
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg

    both(prog)


def test_checkpoint_saved_object_identity_and_save_on_cpu():
    def prog(lib):
        ck = _ck(lib)
        seen = []

        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(y)
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                seen.append(ctx.saved_tensors[0])
                return grad, None

        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(1.0)
        ck.checkpoint(Keep.apply, a, b, use_reentrant=False).backward()

        c = lib.tensor([0.5, 1.5], requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            h = ck.checkpoint(lambda t: t.pow(2).pow(2), c.pow(2), use_reentrant=False)
            out = h.pow(2)
        out.sum().backward()
        return seen[0] is b, c.grad

    assert both(prog)[0] is True


def test_retain_graph_backward_twice_recomputes_twice():
    def prog(lib):
        ck = _ck(lib)
        calls = [0]

        def fn(t):
            calls[0] += 1
            return t.sin().exp()

        x = lib.tensor([0.2, 0.9], requires_grad=True)
        out = ck.checkpoint(fn, x, use_reentrant=False).sum()
        out.backward(retain_graph=True)
        first = x.grad.clone()
        out.backward()
        return calls[0], first, x.grad

    assert both(prog)[0] == 3


def test_graph_exec_group_recomputes_once_for_disjoint_backwards():
    def prog(lib):
        ck = _ck(lib)
        calls = [0]

        def fn(t):
            calls[0] += 1
            return t.sin(), t.cos()

        x = lib.tensor([0.2, 0.9], requires_grad=True)
        a, b = ck.checkpoint(fn, x, use_reentrant=False)
        with ck.GraphExecGroup() as group:
            ga = lib.autograd.grad(a.sum(), x)
            gb = lib.autograd.grad(b.sum(), x)
            nested = error_of(lambda: ck.GraphExecGroup().__enter__())
        return calls[0], ga, gb, nested[:2], group is not None

    assert both(prog)[0] == 2


def test_early_stop_ends_before_the_op_that_completes_recomputation():
    # torch saves an op's inputs before its kernel, below no mode: when the tensors left to
    # recompute are all inputs of the next op, neither the op nor a dispatch mode runs for it
    mode = importlib.import_module("tests.parity.test_checkpoint_selective_parity")

    def prog(lib):
        ck = _ck(lib)
        counter = mode._counting_mode(lib)
        calls = [0]

        def fn(t):
            calls[0] += 1
            return t.sin().exp() * t

        a = lib.tensor([1.0, 0.5], requires_grad=True)
        with counter:
            out = ck.checkpoint(fn, a, use_reentrant=False)
            out.sum().backward()
        return calls[0], counter.ops.count("sin.default"), counter.ops.count("mul.Tensor"), a.grad

    calls, sins, _, _ = both(prog)
    assert calls == 2 and sins == 2  # sin runs again (exp needs it); mul is never recomputed


def test_early_stop_after_outputs_needed_runs_the_op():
    mode = importlib.import_module("tests.parity.test_checkpoint_selective_parity")

    def prog(lib):
        ck = _ck(lib)
        counter = mode._counting_mode(lib)
        a = lib.tensor([1.0, 0.5], requires_grad=True)
        with counter:
            out = ck.checkpoint(lambda t: t.exp(), a, use_reentrant=False)  # saves its result
            out.sum().backward()
        return counter.ops.count("exp.default"), a.grad

    assert both(prog)[0] == 2


def test_overlapping_backwards_in_one_graph_exec_group():
    def prog(lib):
        ck = _ck(lib)
        x = lib.tensor([0.2, 0.9], requires_grad=True)
        out = ck.checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False).sum()
        with ck.GraphExecGroup():
            lib.autograd.grad(out, x, retain_graph=True)
            again = error_of(lambda: lib.autograd.grad(out, x))
        return again

    both(prog)


def test_input_changed_in_place_after_the_forward():
    def prog(lib):
        ck = _ck(lib)
        x = lib.tensor([0.2, 0.9], requires_grad=True)
        h = x * 2
        out = ck.checkpoint(lambda t: t.sin().exp(), h, use_reentrant=False).sum()
        h.add_(1)
        kind, name, message = error_of(out.backward)
        # (torch names the node "Add" here, retrograd "AddBackward0")
        return (kind, name, message.split(" of ")[0],
                "is at version 1; expected version 0" in message)

    both(prog)


def test_no_grad_forward_runs_the_function_once_without_a_graph():
    def prog(lib):
        ck = _ck(lib)
        calls = [0]

        def fn(t):
            calls[0] += 1
            return t.sin()

        x = lib.tensor([0.2, 0.9], requires_grad=True)
        with lib.no_grad():
            out = ck.checkpoint(fn, x, use_reentrant=False)
        return calls[0], out.requires_grad, out

    both(prog)


def test_current_dispatch_mode_while_recomputing():
    def prog(lib):
        ck = _ck(lib)
        pd = importlib.import_module(lib.__name__ + ".utils._python_dispatch")
        seen = []

        def fn(t):
            seen.append(pd._get_current_dispatch_mode())
            return t.sin().exp()

        a = lib.tensor([1.0, 0.5], requires_grad=True)
        ck.checkpoint(fn, a, use_reentrant=False).sum().backward()
        return seen

    assert both(prog) == [None, None]
