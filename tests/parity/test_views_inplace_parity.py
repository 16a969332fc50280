"""Seed 002: in-place ops on views, CopySlices and history rebasing, against torch.

Each program runs with both view-recovery paths of retrograd (as_strided geometry, the default,
and replay of the recorded view ops)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd._autograd.copy_slices import use_view_replay
from tests.parity.harness import both, error_of


@pytest.fixture(params=["auto", "as_strided", "replay"])
def replay(request):
    """The view-recovery mode; the value is True when regenerated grad_fns replay views."""
    prev = (use_view_replay.replay, use_view_replay.geometry)
    use_view_replay.replay = request.param == "replay"
    use_view_replay.geometry = request.param == "as_strided"
    yield use_view_replay.replay
    use_view_replay.replay, use_view_replay.geometry = prev


def names(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def test_rebase_on_non_view(replay):
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        a = x * 1
        n0 = names(a)
        a.mul_(y)
        n1 = names(a)
        nxt = type(a.grad_fn.next_functions[0][0]).__name__
        a.sum().backward()
        return n0, n1, nxt, x.grad, y.grad, a._version

    both(prog)


def test_inplace_on_select_view(replay):
    def prog(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = lib.tensor([5.0, 6.0], requires_grad=True)
        b = x.clone()
        v = b.select(0, 0)
        v.mul_(y)
        view_fn = names(v)
        out = (b * b).sum()
        out.backward()
        return names(b), x.grad, y.grad, b, view_fn

    ours = both(prog) if not replay else prog(retrograd)
    # the view's regenerated grad_fn: torch's AsStridedBackward0, or the replayed view op
    assert ours[4] == ("SelectBackward0" if replay else "AsStridedBackward0")
    assert ours[0] == "CopySlices"


def test_getitem_inplace_and_chains_of_views(replay):
    def prog(lib):
        x = lib.tensor(np.arange(24.0).reshape(2, 3, 4).tolist(), requires_grad=True)
        y = lib.tensor(np.linspace(1, 2, 4).tolist(), requires_grad=True)
        b = x.clone()
        v = b[1].transpose(0, 1)[2]  # view of view of view
        v *= y[2]
        b[0, :, 1:3].add_(y[:2])
        out = (b.exp() * 0.01).sum()
        out.backward()
        return names(b), x.grad, y.grad

    both(prog)


def test_base_modified_while_view_exists(replay):
    def prog(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x * 2
        v = b[1:]
        b.mul_(3)
        n = names(v)
        (v * v).sum().backward()
        return n, x.grad

    if replay:  # the regenerated grad_fn replays the view (SliceBackward0); values as torch
        ours = prog(retrograd)
        assert ours[0] == "SliceBackward0"
        import torch

        np.testing.assert_allclose(ours[1].numpy(), prog(torch)[1].numpy())
    else:
        both(prog)


def test_grad_between_view_and_original(replay):
    # the seed's reason for patching exec_info inside CopySlices
    def prog(lib):
        t = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = lib.tensor([2.0, 3.0], requires_grad=True)
        b = t.clone()
        x = b.select(0, 0)
        x.mul_(y)
        (gt,) = lib.autograd.grad(b.sum(), t, retain_graph=True)
        (gy,) = lib.autograd.grad(b.sum(), y, retain_graph=True)
        return gt, gy

    both(prog)


def test_view_of_non_requires_grad_base_made_to_require_grad(replay):
    def prog(lib):
        b = lib.zeros(2, 3)
        y = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b[0].copy_(y * 2)
        out = (b * b).sum()
        out.backward()
        return names(b), b.requires_grad, y.grad

    both(prog)


@pytest.mark.parametrize("case", ["leaf", "leaf_view", "no_grad_view", "multi_output",
                                  "inference"])
def test_inplace_errors(case):
    def prog(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        if case == "leaf":
            return error_of(lambda: x.mul_(2))
        if case == "leaf_view":
            return error_of(lambda: x[0].mul_(2))
        if case == "no_grad_view":
            b = x * 1
            with lib.no_grad():
                v = b[0]
            return error_of(lambda: v.mul_(2))
        if case == "multi_output":
            b = x * 1
            a0, _ = b.unbind(0)
            return error_of(lambda: a0.mul_(2))
        with lib.inference_mode():
            t = lib.ones(2)
        return error_of(lambda: t.mul_(2))

    both(prog)


def test_copy_node_names_and_dtype_conversion():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = lib.zeros(2, dtype=lib.float64)
        z.copy_(x)
        w = lib.zeros(3, 2)
        w.copy_(x)  # broadcast
        (z.sum() + w.sum()).backward()
        return names(z), z.dtype, x.grad, names(w)

    both(prog)


def test_setitem_variants():
    def prog(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = x * 1
        b[0] = 10.0
        b[lib.tensor([1, 3])] = x[:2] * 5
        b[b > 100] = 0.0
        b.sum().backward()
        return b, x.grad, names(b)

    both(prog)


def test_detach_semantics():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        d = y.detach()
        d.add_(1)
        same_version = d._version == y._version
        data = y.data
        data.add_(1)
        return same_version, y, d.requires_grad, error_of(lambda: y[0].detach_())

    both(prog)


def test_gradcheck_through_inplace_chain_on_views():
    def f(x, y):
        b = x.clone()
        b[0].mul_(y[0])
        b[:, 1].add_(y)
        v = b.t()[1:]
        v.mul_(2)
        return b.exp()

    x = retrograd.tensor(np.random.default_rng(0).random((2, 2)), requires_grad=True)
    y = retrograd.tensor([0.5, -0.3], dtype=retrograd.float64, requires_grad=True)
    for replay, geometry in ((False, False), (False, True), (True, False)):
        use_view_replay.replay, use_view_replay.geometry = replay, geometry
        try:
            assert retrograd.autograd.gradcheck(f, (x, y))
            assert retrograd.autograd.gradgradcheck(f, (x, y))
        finally:
            use_view_replay.replay = use_view_replay.geometry = False


def test_copy_slices_exposes_wrapped_node():
    x = retrograd.tensor([[1.0, 2.0]], requires_grad=True)
    b = x.clone()
    b[0].mul_(2)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    assert type(b.grad_fn.metadata["wrapped_node"]).__name__ == "MulBackward0"


@pytest.mark.parametrize("layout", ["row_major", "transposed", "strided"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_copy_slices_over_bases_of_any_layout(replay, layout, create_graph):
    # CopySlices rebuilds the view on a buffer in the base's layout: on NumPy arrays when no
    # graph is built and the base is dense, through Tensor ops otherwise (a strided base, or
    # create_graph); every path gives torch's gradients
    def prog(lib):
        data = np.arange(24, dtype=np.float64).reshape(6, 4) / 10
        x = lib.tensor(data, requires_grad=True)
        y = lib.tensor([2.0, 3.0], requires_grad=True)
        if layout == "row_major":
            b = x * 1.0
        elif layout == "transposed":
            b = x.t() * 1.0  # a (4, 6) result laid out column-major
        else:
            b = lib.from_numpy(data.T[:, ::3])  # (4, 2), no dense layout; made to need grad
        v = b[1:3, 1]
        v.mul_(y)
        loss = (b * b).sum()
        leaves = (x, y) if layout != "strided" else (y,)
        grads = lib.autograd.grad(loss, leaves, create_graph=create_graph)
        return grads, names(b), b.stride()

    both(prog)




def test_inplace_on_expanded_tensors():
    # arithmetic in place on a tensor whose elements share memory is refused with torch's
    # message; an expand that shares nothing is written like any view
    def overlapping(lib):
        a = lib.ones(1, 3).expand(2, 3)
        return error_of(lambda: a.add_(1))

    def disjoint(lib):
        base = lib.ones(3, 1)
        e = base.expand(3, 1)
        e.mul_(3)
        return base, base._version, e.stride()

    assert both(overlapping)[:2] == ("raised", "RuntimeError")
    both(disjoint)
