"""Selective activation checkpointing (policies, cache, errors); against torch."""

from __future__ import annotations

import functools
import gc
import importlib
import weakref

import pytest

import retrograd
from tests.parity.harness import both, error_of


def _ck(lib):
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


def _counting_mode(lib):
    pd = importlib.import_module(lib.__name__ + ".utils._python_dispatch")

    class Count(pd.TorchDispatchMode):
        def __init__(self):
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func.__name__)
            return func(*args, **(kwargs or {}))

    return Count()


def _context(lib, kind):
    ck = _ck(lib)
    mm = lib.ops.aten.mm.default
    if kind == "plain":
        return None
    if kind == "list":
        return functools.partial(ck.create_selective_checkpoint_contexts, [mm])
    if kind == "policy":
        def policy(ctx, op, *args, **kwargs):
            return (ck.CheckpointPolicy.MUST_SAVE if op == mm
                    else ck.CheckpointPolicy.PREFER_RECOMPUTE)
        return functools.partial(ck.create_selective_checkpoint_contexts, policy)
    # a policy returning a bool is accepted: True saves
    return functools.partial(ck.create_selective_checkpoint_contexts,
                             lambda ctx, op, *a, **k: op == mm)


@pytest.mark.parametrize("kind", ["plain", "list", "policy", "bool_policy"])
def test_saved_ops_are_not_run_again_in_backward(kind):
    def prog(lib):
        ck = _ck(lib)
        x = lib.tensor([[0.1, 0.2], [0.3, -0.4]], requires_grad=True)
        y = lib.tensor([[1.5, -0.2], [0.7, 0.4]], requires_grad=True)

        def fn(a, b):
            return lib.mm(a.cos(), b).sin().sum()

        context_fn = _context(lib, kind)
        kwargs = {} if context_fn is None else {"context_fn": context_fn}
        out = ck.checkpoint(fn, x, y, use_reentrant=False, **kwargs)
        mode = _counting_mode(lib)
        with mode:
            out.backward()
        # mm: one per input's gradient, plus the recomputed forward mm unless it was saved
        return mode.ops.count("mm.default"), mode.ops.count("cos.default"), x.grad, y.grad

    mm_calls, cos_calls, _, _ = both(prog)
    assert mm_calls == (3 if kind == "plain" else 2) and cos_calls == 2


def test_policy_runs_in_forward_only_and_sees_the_output():
    def prog(lib):
        ck = _ck(lib)
        seen = []

        def policy(ctx, op, *args, **kwargs):
            seen.append((str(op), ctx.is_recompute, tuple(ctx.op_output.shape)))
            return ck.CheckpointPolicy.PREFER_RECOMPUTE

        x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        context_fn = functools.partial(ck.create_selective_checkpoint_contexts, policy,
                                       allow_cache_entry_mutation=True)
        out = ck.checkpoint(lambda t: t.sin().sin().sin(), x, use_reentrant=False,
                            context_fn=context_fn)
        out.sum().backward()
        return seen, x.grad

    both(prog)


def test_multi_output_op_is_cached_whole():
    def prog(lib):
        ck = _ck(lib)
        calls = [0]

        def policy(ctx, op, *args, **kwargs):
            if op == lib.ops.aten.var_mean.correction:
                calls[0] += 1
                return ck.CheckpointPolicy.MUST_SAVE
            return ck.CheckpointPolicy.PREFER_RECOMPUTE

        def fn(t):
            a, b = lib.var_mean(t)
            return a * b

        x = lib.tensor([0.3, 1.2, -0.5], requires_grad=True)
        context_fn = functools.partial(ck.create_selective_checkpoint_contexts, policy)
        out = ck.checkpoint(fn, x, use_reentrant=False, context_fn=context_fn)
        mode = _counting_mode(lib)
        with mode:
            (g,) = lib.autograd.grad(out.sum(), (x,))
        return g, calls[0], mode.ops.count("var_mean.correction")

    both(prog)


def test_mutating_a_cached_tensor():
    def prog(lib):
        ck = _ck(lib)

        def policy(ctx, op, *args, **kwargs):
            return (ck.CheckpointPolicy.MUST_SAVE if op == lib.ops.aten.sin.default
                    else ck.CheckpointPolicy.PREFER_RECOMPUTE)

        def fn(t):
            return t.sin().mul_(2).cos().exp()

        results = []
        for allow in (False, True):
            x = lib.tensor([0.3, 1.2, -0.5], requires_grad=True)
            context_fn = functools.partial(ck.create_selective_checkpoint_contexts, policy,
                                           allow_cache_entry_mutation=allow)
            out = ck.checkpoint(fn, x, use_reentrant=False, context_fn=context_fn)
            results.append(error_of(lambda out=out: out.sum().backward()))
        return results

    both(prog)


def test_second_backward_over_a_selective_region_raises():
    def prog(lib):
        ck = _ck(lib)
        context_fn = functools.partial(ck.create_selective_checkpoint_contexts,
                                       [lib.ops.aten.sin.default])
        x = lib.tensor([0.3, 1.2, -0.5], requires_grad=True)
        out = ck.checkpoint(lambda t: t.sin().cos().exp(), x, use_reentrant=False,
                            context_fn=context_fn)
        first = error_of(lambda: out.sum().backward(retain_graph=True))
        return first, x.grad, error_of(lambda: out.sum().backward(retain_graph=True))

    both(prog)


def test_recomputation_that_calls_other_ops():
    def prog(lib):
        ck = _ck(lib)
        calls = [0]

        def fn(t):
            calls[0] += 1
            return t.sin().exp() if calls[0] == 1 else t.cos().exp()

        context_fn = functools.partial(ck.create_selective_checkpoint_contexts,
                                       [lib.ops.aten.exp.default])
        x = lib.tensor([0.3, 1.2], requires_grad=True)
        out = ck.checkpoint(fn, x, use_reentrant=False, context_fn=context_fn)
        return error_of(lambda: out.sum().backward())

    both(prog)


def test_bad_policy_arguments():
    def prog(lib):
        ck = _ck(lib)
        make = ck.create_selective_checkpoint_contexts
        packet = error_of(make, [lib.ops.aten.sin])
        return (error_of(make, [2]), error_of(make, 2), packet[:2],
                "update the OpOverloadPacket to a specific OpOverload" in packet[2])

    both(prog)


def test_int_view_and_checkpoint_policy_members():
    def prog(lib):
        ck = _ck(lib)
        x = lib.tensor([1, 2, 3])
        y = lib.tensor([0.3, 1.2, -0.5], requires_grad=True)
        context_fn = functools.partial(ck.create_selective_checkpoint_contexts,
                                       [lib.ops.aten.view.default])
        out = ck.checkpoint(lambda a, b: (a.view(-1), b.sin().cos()), x, y,
                            use_reentrant=False, context_fn=context_fn)
        out[1].sum().backward()
        return out[0], y.grad, [(p.name, p.value) for p in ck.CheckpointPolicy]

    both(prog)


def test_op_overloads_compare_and_print_like_torch():
    def prog(lib):
        aten = lib.ops.aten
        return (str(aten.mm.default), repr(aten.mm.default), repr(aten.mul), str(aten.mul.Tensor),
                aten.sin.default.__name__, aten.sin.default is aten.sin.default,
                aten.sin.default == aten.cos.default)

    both(prog)


def test_cache_is_freed_with_the_graph_or_after_backward():
    ck = _ck(retrograd)
    pd = retrograd.utils._python_dispatch
    from retrograd.utils._selective_checkpoint import _CachingTorchDispatchMode

    ref = None

    def fn(x):
        nonlocal ref
        out = x.cos().exp()
        mode = pd._get_current_dispatch_mode()
        if isinstance(mode, _CachingTorchDispatchMode):
            raw = mode.storage[retrograd.ops.aten.exp.default][0].val
            assert not raw.requires_grad  # detached: no graph -> hooks -> storage -> graph cycle
            ref = weakref.ref(raw)
        return out.sin()

    def save_all(ctx, op, *args, **kwargs):
        return ck.CheckpointPolicy.MUST_SAVE

    gc.disable()
    try:
        x = retrograd.tensor([0.1, 0.2], requires_grad=True)
        context_fn = functools.partial(ck.create_selective_checkpoint_contexts, save_all)
        out = ck.checkpoint(fn, x, use_reentrant=False, context_fn=context_fn)
        assert ref() is not None
        del out
        assert ref() is None

        out = ck.checkpoint(fn, x, use_reentrant=False, context_fn=context_fn)
        assert ref() is not None
        out.sum().backward(retain_graph=True)
        assert ref() is None
    finally:
        gc.enable()


def test_selective_around_a_plain_checkpoint():
    def prog(lib):
        ck = _ck(lib)

        def inner(t):
            return lib.mm(t, t).tanh()

        def outer(t):
            h = ck.checkpoint(inner, t.sin(), use_reentrant=False)
            return lib.mm(h, t).exp().sum()

        context_fn = functools.partial(ck.create_selective_checkpoint_contexts,
                                       [lib.ops.aten.mm.default, lib.ops.aten.sin.default])
        x = lib.tensor([[0.1, 0.2], [0.3, -0.4]], requires_grad=True)
        out = ck.checkpoint(outer, x, use_reentrant=False, context_fn=context_fn)
        (g,) = lib.autograd.grad(out, x, create_graph=True)
        # double backward goes through the region's forward graph again: a second recompute
        again = error_of(lambda: lib.autograd.grad(g.sum(), x))
        return out, g, again, lib.autograd.grad(outer(x), x)[0]

    both(prog)


def test_cached_in_place_op_is_not_applied_twice():
    def prog(lib):
        ck = _ck(lib)
        context_fn = functools.partial(ck.create_selective_checkpoint_contexts,
                                       lambda ctx, op, *a, **k: True,
                                       allow_cache_entry_mutation=True)
        x = lib.tensor([0.3, 1.2, -0.5, 0.7], requires_grad=True)
        out = ck.checkpoint(lambda t: t.exp().mul_(2).view(2, 2).sin(), x, use_reentrant=False,
                            context_fn=context_fn)
        mode = _counting_mode(lib)
        with mode:
            out.sum().backward()
        # (the grad uses the mutated exp result, as the user allowed: not exp's true grad)
        return x.grad, mode.ops.count("exp.default"), mode.ops.count("mul_.Tensor")

    both(prog)


def test_view_ops_are_rerun_even_when_the_policy_saves_them():
    # retrograd: a view of a recomputed tensor must alias it, so views run again (torch hands
    # back the forward's view)
    ck = _ck(retrograd)
    context_fn = functools.partial(ck.create_selective_checkpoint_contexts,
                                   lambda ctx, op, *a, **k: op != retrograd.ops.aten.sin.default)
    x = retrograd.tensor([0.3, 1.2, -0.5, 0.7], requires_grad=True)
    out = ck.checkpoint(lambda t: t.sin().view(2, 2).exp(), x, use_reentrant=False,
                        context_fn=context_fn)
    mode = _counting_mode(retrograd)
    with mode:
        out.sum().backward()
    assert mode.ops.count("sin.default") == 1 and "exp.default" not in mode.ops
    assert mode.ops.index("sin.default") < mode.ops.index("view.default")
    s = x.detach().sin()
    assert x.grad.tolist() == pytest.approx((s.exp() * x.detach().cos()).tolist())
