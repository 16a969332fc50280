"""NOTE [Gradient ownership]: the engine writes in place, or keeps as `.grad` without a copy,
only the gradients it made itself; never a gradient the user gave, a hook kept, or one that
reached two places. Decisions are read from memory (np.shares_memory, data_ptr), compared with
torch where torch's rule shows."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import retrograd
from retrograd._autograd import engine
from tests.parity.harness import both


def _shares(a, b) -> bool:
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


# --- what the engine made is written in place or kept ----------------------------------------

def test_a_sum_the_engine_made_is_kept_as_grad():
    # x's two gradients are summed in its input buffer; the hook sees that sum and keeps no
    # reference, so .grad is the sum's memory (torch steals it too)
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g.data_ptr()))
        (x * 2 + x * 3).sum().backward()
        return x.grad.data_ptr() == seen[0], x.grad

    both(prog)


def test_a_fresh_gradient_is_summed_into_in_place():
    # w's first gradient is a formula's new array: the later ones are added into it, so w's
    # buffer keeps that memory to the end (observable: the hook sees it as the sum)
    w = retrograd.ones(4, requires_grad=True)
    ptrs = []
    w.register_hook(lambda g: ptrs.append(g.data_ptr()))
    y = retrograd.ones(4)
    for _ in range(5):
        y = y * w
    y.sum().backward()
    assert w.grad.data_ptr() == ptrs[0]
    np.testing.assert_allclose(w.grad.numpy(), np.full(4, 5.0))


def test_a_hook_may_return_a_new_gradient_that_is_kept():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        made = []

        def hook(g):
            r = g * 10
            made.append(r.data_ptr())
            return r

        x.register_hook(hook)
        (x * 2).sum().backward()
        return x.grad.data_ptr() == made[0], x.grad

    both(prog)


def test_linear_weight_gradient_through_a_transpose_is_kept():
    # mm's new product reaches the weight as a transpose (TBackward passes a view of what it
    # was given): still only the engine's, so .grad is that memory with the weight's layout
    seen = []
    w = retrograd.randn(16, 8, requires_grad=True)
    w.register_hook(lambda g: seen.append(g.data_ptr()))
    retrograd.nn.functional.linear(retrograd.randn(4, 8), w).sum().backward()
    assert w.grad.data_ptr() == seen[0] and w.grad.stride() == (8, 1)


def test_existing_grad_is_accumulated_in_place_even_if_the_user_set_it():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        mine = lib.full((3,), 7.0)
        x.grad = mine
        (x * 2).sum().backward()
        return x.grad is mine, mine, mine._version > 0

    both(prog)


# --- what others may see is never written ----------------------------------------------------

def test_a_gradient_passed_to_backward_is_never_written():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        g = lib.tensor([1.0, 2.0, 3.0])
        y = x * 1
        (y + y).backward(g)  # add hands g itself to both of y's edges: y's buffer sums them
        x.backward(g)  # and x's .grad is not g either
        return g, x.grad, x.grad.data_ptr() == g.data_ptr()

    both(prog)


def test_a_view_of_a_users_gradient_is_not_kept():
    # view's backward passes on a view of the gradient it was given, here the caller's: x.grad
    # is a copy (torch keeps the view, so its x.grad is g's memory)
    x = retrograd.ones(3, requires_grad=True)
    g = retrograd.tensor([1.0, 2.0, 3.0])
    x.view(3).backward(g)
    assert not _shares(x.grad, g)
    (x * 3).sum().backward()
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0, 3.0])


def test_a_gradient_a_hook_kept_is_never_written_later():
    x = retrograd.ones(3, requires_grad=True)
    kept = []
    x.register_hook(lambda g: kept.append(g))
    (x * 2).sum().backward()
    assert not _shares(kept[0], x.grad)
    (x * 3).sum().backward()  # accumulated into x.grad in place
    np.testing.assert_array_equal(kept[0].numpy(), np.full(3, 2.0))
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 5.0))


def test_a_gradient_a_non_leaf_hook_kept_is_never_written_later():
    # view's backward passes on a view of what it was given; that was seen by y's hook, so
    # x's .grad is a copy (torch keeps the view's memory: its .grad and the hook's tensor
    # share it there, and the second backward changes what the hook kept)
    x = retrograd.ones(3, requires_grad=True)
    kept = []
    y = x.view(3)
    y.register_hook(lambda g: kept.append(g))
    (y * 2).sum().backward()
    assert not _shares(kept[0], x.grad)
    (x * 3).sum().backward()
    np.testing.assert_array_equal(kept[0].numpy(), np.full(3, 2.0))


def test_a_node_prehook_that_keeps_the_gradient_prevents_keeping_it():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        kept = []
        acc.register_prehook(lambda go: kept.append(go) or None)
        y.sum().backward()
        shared = x.grad.data_ptr() == kept[0][0].data_ptr()
        (x * 3).sum().backward()
        return shared, kept[0][0], x.grad

    both(prog)


def test_a_gradient_handed_to_two_inputs_is_written_by_neither():
    # add passes its gradient to a and b; a's buffer also gets a*3's: the sum must be new
    # memory, not b's gradient changed in place
    def prog(lib):
        a = lib.zeros(3, requires_grad=True)
        b = lib.zeros(3, requires_grad=True)
        ((a + b).exp().sum() + (a * 3).sum()).backward()
        return a.grad, b.grad, a.grad.data_ptr() == b.grad.data_ptr()

    both(prog)


def test_a_custom_functions_gradient_is_copied():
    # what a custom Function's backward returns is the user's: it may keep it
    keep = retrograd.full((3,), 2.0)

    class KeepGrad(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return keep

    x = retrograd.ones(3, requires_grad=True)
    KeepGrad.apply(x).sum().backward()
    assert not _shares(x.grad, keep)
    (x * 3).sum().backward()
    np.testing.assert_array_equal(keep.numpy(), np.full(3, 2.0))


def test_autograd_grad_results_are_not_written_afterwards():
    # h's gradient is captured (returned to the caller) and h's node then runs: what it passes
    # on must not be summed into in place
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        h = x + 0
        y = (h * h).sum() + (x * 5).sum()
        gh, gx = lib.autograd.grad(y, (h, x))
        return gh, gx, gh.data_ptr() == gx.data_ptr()

    both(prog)


def test_create_graph_never_writes_in_place():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    y = x * x
    y.register_hook(lambda g: seen.append(g))
    (y + y).sum().backward(create_graph=True)  # y's buffer gets one gradient twice
    np.testing.assert_array_equal(seen[0].detach().numpy(), [2.0, 2.0])
    assert x.grad.grad_fn is not None
    g1 = x.grad
    (x * 3).sum().backward(create_graph=True)
    assert x.grad is not g1
    np.testing.assert_array_equal(g1.detach().numpy(), [4.0, 8.0])


# --- the decisions read no reference counts --------------------------------------------------

def test_decisions_do_not_read_reference_counts(monkeypatch):
    def refuse(obj):
        raise AssertionError("reference counts decide nothing")

    monkeypatch.setattr(sys, "getrefcount", refuse)
    w = retrograd.randn(8, 4, requires_grad=True)
    b = retrograd.zeros(8, requires_grad=True)
    x = retrograd.randn(5, 4)
    out = retrograd.nn.functional.linear(x, w, b)
    (out * out).sum().backward()
    (out.detach().sum() * w).sum().backward()
    expected = 2 * out.detach().numpy().T @ x.numpy() + out.detach().numpy().sum()
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)


def test_an_owned_formula_result_never_shares_forward_memory(monkeypatch):
    # the engine takes an op node's result as its own when it is new memory or the memory of a
    # gradient it was given; no formula may return (a view of) a forward value instead
    from tests.test_ops_generated import GRAD, _func

    alive: list = []
    bad: list = []
    orig = engine._owned

    def checked(node, i, g, outputs, grads, owned):
        r = orig(node, i, g, outputs, grads, owned)
        if r:
            for other in alive:
                if np.shares_memory(g._data, other):
                    bad.append(current)
        return r

    monkeypatch.setattr(engine, "_owned", checked)
    for sample in GRAD:
        current = sample.id
        f, leaves = _func(sample)
        outs = [o for o in f(*leaves) if o.requires_grad]
        if not outs:
            continue
        vs = [retrograd.ones_like(o) for o in outs]
        alive[:] = [t._data for t in (*leaves, *outs, *vs)]
        alive += [sv._data for sv in _saved_values(outs) if sv._data is not None]
        retrograd.autograd.backward(outs, vs, inputs=leaves)
    assert not bad, sorted(set(bad))


def _saved_values(outs: list) -> list:
    """The arrays every node of the graph saved."""
    from retrograd._autograd.saved import SavedVariable

    seen, stack, found = set(), [o.grad_fn for o in outs if o.grad_fn is not None], []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for v in getattr(node, "_saved", None) or ():
            for sv in (v if isinstance(v, tuple) else (v,)):
                if isinstance(sv, SavedVariable):
                    found.append(sv)
                elif isinstance(sv, retrograd.Tensor):
                    found.append(sv)
        stack.extend(nf for nf, _ in node.next_functions)
    return found


@pytest.mark.parametrize("hook", ["none", "keeps", "records"])
def test_a_leaf_hook_decides_as_torch(hook):
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        log = []
        if hook == "keeps":
            x.register_hook(lambda g: log.append(g))
        elif hook == "records":
            x.register_hook(lambda g: log.append(g.data_ptr()))
        y = x * 2
        y.register_hook(lambda g: None)
        y.sum().backward()
        first = x.grad
        ptr = first.data_ptr()
        (x * 3).sum().backward()
        return x.grad is first, x.grad.data_ptr() == ptr, x.grad

    both(prog)


def _owned_bits(outputs: tuple, grads: list, owned: int) -> int:
    class FakeNode:
        pass

    return sum(engine._owned(FakeNode(), i, g, outputs, grads, owned) << i
               for i, g in enumerate(outputs) if g is not None)


def test_a_result_that_another_result_slices_is_not_the_engines():
    # ownership of a node's results: a gradient and a slice of it are neither's (summing into
    # one in place, or keeping it as .grad, would change the other)
    r = retrograd.zeros(4)
    incoming = [retrograd.ones(4)]
    assert _owned_bits((r, r[:2]), incoming, 1) == 0
    assert _owned_bits((r, retrograd.zeros(2)), incoming, 1) == 0b11
    # the gradient the node was given, passed on or viewed whole: the engine's only if it was
    given = retrograd.ones(4, 2)
    assert _owned_bits((given, retrograd.zeros(2)), [given], 0) == 0b10
    assert _owned_bits((given.t(), retrograd.zeros(2)), [given], 1) == 0b11
    assert _owned_bits((given.t(), retrograd.zeros(2)), [given], 0) == 0b10
    assert _owned_bits((given[0], retrograd.zeros(2)), [given], 1) == 0b10
    assert _owned_bits((given, given), [given], 1) == 0


def test_pass_on_ops_are_declared():
    from retrograd._ops.registry import OPS, PASS_ON

    assert PASS_ON <= set(OPS)
    assert OPS["t"].node_cls._reads_ownership and OPS["add.Tensor"].node_cls._reads_ownership
    assert not OPS["mul.Tensor"].node_cls._reads_ownership


def test_a_node_passes_on_only_what_it_was_given_as_the_engines():
    # rsub's node first completes a's buffer (whose sum is the engine's), then passes the
    # caller's gradient on to b: that one must still be copied into b.grad
    def prog(lib):
        a = lib.ones(3, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        y = lib.rsub(a, b)
        z = a * 3
        gy = lib.tensor([1.0, 2.0, 3.0])
        lib.autograd.backward([y, z], [gy, lib.ones(3)])
        shared = b.grad.data_ptr() == gy.data_ptr()
        (b * 2).sum().backward()
        return shared, gy, a.grad, b.grad

    both(prog)
