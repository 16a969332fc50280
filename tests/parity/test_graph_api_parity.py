"""Seed 003: the public graph API, with the seed's docstring examples, against torch."""

from __future__ import annotations

import inspect
import logging
import re
import threading
import warnings

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of, torch_or_skip

# --- the seed's docstring examples -------------------------------------------------------------


def test_doc_node_name_and_isinstance():
    def prog(lib):
        a = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
        b = a.clone()
        return isinstance(b.grad_fn, lib.autograd.graph.Node), b.grad_fn.name()

    assert both(prog) == (True, "CloneBackward0")


def test_doc_node_register_hook():
    def prog(lib):
        a = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
        b = a.clone()
        handle = b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2,))
        b.sum().backward(retain_graph=True)
        first = a.grad.clone()
        handle.remove()
        a.grad = None
        b.sum().backward(retain_graph=True)
        return first, a.grad

    first, second = both(prog)
    assert first.tolist() == [2.0, 2.0, 2.0] and second.tolist() == [1.0, 1.0, 1.0]


def test_doc_node_register_prehook():
    def prog(lib):
        a = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
        b = a.clone()
        handle = b.grad_fn.register_prehook(lambda gI: (gI[0] * 2,))
        b.sum().backward(retain_graph=True)
        first = a.grad.clone()
        handle.remove()
        a.grad = None
        b.sum().backward(retain_graph=True)
        return first, a.grad

    first, second = both(prog)
    assert first.tolist() == [2.0, 2.0, 2.0] and second.tolist() == [1.0, 1.0, 1.0]


def test_doc_saved_tensors_hooks_prints(capsys):
    def prog(lib):
        log = []

        def pack_hook(x):
            log.append("Packing " + repr(x))
            return x

        def unpack_hook(x):
            log.append("Unpacking " + repr(x))
            return x

        a = lib.ones(5, requires_grad=True)
        b = lib.ones(5, requires_grad=True) * 2
        with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            y = a * b
        y.sum().backward()
        return [entry.split(" object at")[0] for entry in log]

    log = both(prog)
    # The seed's docstring lists `a` (self) before `b` (other); torch 2.13 packs and unpacks
    # `other` first (the order mul's formulas read them). retrograd follows the behaviour: the
    # lines are the seed's, the order is torch 2.13's.
    assert log == ["Packing tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)",
                   "Packing tensor([1., 1., 1., 1., 1.], requires_grad=True)",
                   "Unpacking tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)",
                   "Unpacking tensor([1., 1., 1., 1., 1.], requires_grad=True)"]


def test_doc_multi_grad_hook():
    def prog(lib):
        calls = []
        a = lib.rand(2, 3, requires_grad=True)
        b = lib.rand(2, 3, requires_grad=True)
        c = a * b
        d = a * b
        lib.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: calls.append([g is not None for g in grads]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        return calls

    assert both(prog) == [[True, True, True, False], [True, False, True, False]]


def test_doc_allow_mutation_on_saved_tensors():
    def prog(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = lib.ones(2, 3, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.sum().backward()
            return a.grad, b

    both(prog)


# --- GradientEdge --------------------------------------------------------------------------------


def test_gradient_edges_as_inputs_and_outputs():
    def prog(lib):
        G = lib.autograd.graph
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        out = (h * h).sum()
        edge = G.get_gradient_edge(h)
        leaf_edge = G.get_gradient_edge(x)
        (g_h,) = lib.autograd.grad(out, edge, retain_graph=True)
        (g_x,) = lib.autograd.grad(out, leaf_edge, retain_graph=True)
        (g_from_edge,) = lib.autograd.grad(edge, x, grad_outputs=lib.ones(2))
        return (g_h, g_x, g_from_edge, type(edge.node).__name__, edge.output_nr,
                type(leaf_edge.node).__name__, error_of(G.get_gradient_edge, lib.ones(1)))

    both(prog)


def test_increment_version():
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 1
        z = y * y
        v0 = y._version
        lib.autograd.graph.increment_version(y)
        return v0, y._version, error_of(lambda: z.sum().backward())[:2]

    both(prog)


def test_disable_saved_tensors_hooks_nested_restores():
    def prog(lib):
        G = lib.autograd.graph
        msgs = []
        with G.disable_saved_tensors_hooks("outer"):
            with G.disable_saved_tensors_hooks("inner"):
                msgs.append(error_of(lambda: G.save_on_cpu().__enter__()))
            msgs.append(error_of(lambda: G.save_on_cpu().__enter__()))
        with G.save_on_cpu():
            x = lib.ones(2, requires_grad=True)
            y = (x * x).sum()
        y.backward()
        return msgs, x.grad

    both(prog)


def test_save_on_cpu_makes_no_copy_for_cpu_tensors():
    seen = []
    with retrograd.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    x = retrograd.ones(3, requires_grad=True)
    with retrograd.autograd.graph.save_on_cpu():
        y = x * x
    raw = y.grad_fn._raw_saved_self
    seen.append(raw._hooks[0][1] is x or raw._hooks[0][1]._data is x._data)
    assert all(seen)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_multi_grad_hook_invalid_mode():
    def prog(lib):
        x = lib.ones(1, requires_grad=True)
        return error_of(lib.autograd.graph.register_multi_grad_hook, (x,), print, mode="some")

    both(prog)


def test_multi_grad_hook_any_mode_fires_once_per_backward():
    def prog(lib):
        calls = []
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        out = (a * b).sum()
        h = lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: calls.append(g),
                                                        mode="any")
        out.backward(retain_graph=True)
        out.backward(retain_graph=True)
        h.remove()
        out.backward()
        return len(calls), calls[0]

    both(prog)


def test_multi_grad_hook_under_autograd_grad_with_leaves():
    # PyTorch cannot count captured leaf inputs under grad() (its issue 131753); retrograd can
    calls = []
    a = retrograd.ones(2, requires_grad=True)
    b = retrograd.ones(2, requires_grad=True)
    c = a * b
    retrograd.autograd.graph.register_multi_grad_hook(
        (a, b, c), lambda grads: calls.append([g is not None for g in grads]))
    retrograd.autograd.grad(c.sum(), (a, b))
    assert calls == [[True, True, True]]


# --- hook order ----------------------------------------------------------------------------------


def test_hook_order_on_non_leaf():
    def prog(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: log.append("tensor_pre") or g * 10)
        y.grad_fn.register_prehook(lambda go: log.append("node_pre"))
        y.grad_fn.register_hook(lambda gi, go: log.append("node_post"))
        y.register_hook(lambda g: log.append("tensor_pre2"))
        (y * y).sum().backward()
        return log, y.grad, x.grad

    both(prog)


def test_hook_order_on_leaf_and_accumulate():
    def prog(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: log.append("tensor_pre"))
        x.register_post_accumulate_grad_hook(lambda p: log.append("post_acc"))
        acc = (x * 1).grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: log.append("acc_pre"))
        acc.register_hook(lambda gi, go: log.append("acc_post"))
        (x * 3).sum().backward()
        return log, x.grad

    both(prog)


def test_hooks_follow_in_place_changes():
    def prog(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        y.register_hook(lambda g: log.append(("before", g.tolist())))
        y.retain_grad()
        y.mul_(3)
        y.register_hook(lambda g: log.append(("after", g.tolist())))
        (y * 2).sum().backward()
        return log, y.grad, x.grad

    both(prog)


def test_hook_registered_during_backward_and_replacing_grad():
    def prog(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y * 3

        def first(g):
            log.append("first")
            y.register_hook(lambda gg: log.append("late") or gg + 1)
            return g * 2

        z.register_hook(first)
        z.sum().backward()
        return log, x.grad

    both(prog)


def test_hook_removed_during_backward():
    def prog(lib):
        log = []
        x = lib.tensor([1.0], requires_grad=True)
        y = x * 2
        handles = []
        handles.append(y.register_hook(lambda g: (log.append("a"), handles[1].remove())[0]))
        handles.append(y.register_hook(lambda g: log.append("b")))
        y.sum().backward()
        return log

    both(prog)


# --- anomaly mode ------------------------------------------------------------------------------


def test_anomaly_nan_message():
    def prog(lib):
        class NanBackward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")

        x = lib.tensor([1.0], requires_grad=True)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                return error_of(lambda: NanBackward.apply(x).sum().backward())

    both(prog)


def test_anomaly_warns_with_forward_trace():
    import warnings

    class Fails(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = retrograd.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with retrograd.autograd.detect_anomaly():
            y = Fails.apply(x)
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()
    texts = [str(m.message) for m in w]
    assert any(t.startswith("Error detected in FailsBackward. Traceback of forward call") and
               "test_anomaly_warns_with_forward_trace" in t for t in texts)


# --- logging -------------------------------------------------------------------------------------


def test_debug_logging_of_executed_nodes(caplog):
    x = retrograd.ones(2, 3, requires_grad=True)
    y = (x * 2).sum()
    with caplog.at_level(logging.DEBUG, logger="retrograd.autograd.graph"):
        y.backward()
    lines = [r.getMessage() for r in caplog.records if r.name == "retrograd.autograd.graph"]
    assert [ln.split(" object")[0] for ln in lines] == [
        "Executing: <SumBackward0", "Executing: <MulBackward0", "Executing: <AccumulateGrad"]
    assert lines[0].endswith("with grad_outputs: [f32[]]")
    assert lines[1].endswith("with grad_outputs: [f32[2, 3]]")
    assert y.grad_fn._hooks is None or not y.grad_fn._hooks.pre  # removed afterwards


# --- threads and reentrancy -----------------------------------------------------------------------


def test_concurrent_backward_on_shared_parameters():
    rng = np.random.default_rng(0)
    w = retrograd.tensor(rng.standard_normal((4, 4)), requires_grad=True)
    xs = [retrograd.tensor(rng.standard_normal((3, 4))) for _ in range(8)]

    def loss(x):
        return (x.mm(w).tanh() * 2).sum()

    expected = np.zeros((4, 4))
    for x in xs:
        (g,) = retrograd.autograd.grad(loss(x), w)
        expected += g.numpy() * 100
    errors = []

    def worker(x):
        try:
            for _ in range(100):
                loss(x).backward()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-9)


def test_reentrant_backward_inside_custom_function():
    def prog(lib):
        class Reentrant(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                with lib.enable_grad():
                    inner = x.detach().requires_grad_()
                    (inner * inner).sum().backward()
                return g * inner.grad

        x = lib.tensor([1.0, 3.0], requires_grad=True)
        Reentrant.apply(x).sum().backward()
        return x.grad

    both(prog)


def test_nested_allow_mutation_and_errors():
    torch_or_skip()
    G = retrograd.autograd.graph
    with G.allow_mutation_on_saved_tensors():
        # retrograd's opt-in: nesting joins the outer context
        with G.allow_mutation_on_saved_tensors(allow_nesting=True):
            a = retrograd.ones(3, requires_grad=True)
            b = a.clone()
            out = (b * b).sum()
            b.mul_(5)
        out.backward()
        assert a.grad.tolist() == [2.0, 2.0, 2.0]
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with G.allow_mutation_on_saved_tensors():
                pass
    with G.allow_mutation_on_saved_tensors():
        a = retrograd.ones(2, requires_grad=True)
        out = (a.clone() * 3).exp().sum()
    with pytest.raises(AssertionError, match="Trying to backward outside"):
        out.backward()


def test_anomaly_trace_ends_at_the_users_call():
    # the recorded forward stack stops at the user's line, without retrograd's own frames
    x = retrograd.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with retrograd.autograd.detect_anomaly():
            y = x.exp()
            line = inspect.currentframe().f_lineno - 1
            y.mul_(2)  # exp saved its result: backward reports the modification
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()
    texts = [str(m.message) for m in caught if "Error detected in ExpBackward0" in str(m.message)]
    assert len(texts) == 1
    frames = re.findall(r'File "([^"]+)", line (\d+)', texts[0])
    assert frames[-1] == (__file__, str(line))
