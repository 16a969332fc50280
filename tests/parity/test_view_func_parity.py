"""Tensor._view_func / _view_func_unsafe and slice_inverse, against torch."""

from __future__ import annotations

import numpy as np

from tests.parity.harness import both, error_of


def _base(lib):
    return lib.tensor(np.arange(60.0).reshape(3, 4, 5))


def test_view_func_replays_chain_with_visitors():
    def prog(lib):
        base, new_base = _base(lib), _base(lib) * 2
        visits = []

        def visitor(x):
            visits.append(x)
            return x + 1 if x == 0 else x

        with lib.autograd._force_original_view_tracking(True):
            view = base.transpose(0, 1)[1:3].select(2, 0)
            replayed = view._view_func(new_base, symint_visitor_fn=visitor)
            again = view._view_func(new_base)
            reshaped = base.view(20, 3)._view_func(new_base, symint_visitor_fn=visitor)
        return replayed, again, reshaped, visits

    both(prog)


def test_view_func_without_replay_uses_geometry():
    def prog(lib):
        base, new_base = _base(lib), _base(lib) + 100
        view = base[:, 1:3].select(2, 4)
        out = view._view_func(new_base, symint_visitor_fn=lambda x: x + 1)
        return out, out._base is new_base

    both(prog)


def test_view_func_none_cases():
    def prog(lib):
        base = _base(lib)
        view = base.select(1, 2)
        return (base._view_func(base) is None, view._view_func(lib.zeros(3, 4, 6)) is None,
                view._view_func_unsafe(lib.zeros(3, 4, 6)).shape)

    both(prog)


def test_slice_inverse_and_tensor_visitor():
    def prog(lib):
        base = _base(lib)
        sliced = base[:, 2:3, :].detach()
        view = lib.ops.aten.slice_inverse(sliced, base, 1, 2, 3, 1)
        with lib.autograd._force_original_view_tracking(True):
            view = lib.ops.aten.slice_inverse(sliced, base, 1, 2, 3, 1)
            new_sliced = (_base(lib) - 7)[:, 2:3, :].detach()
            swapped = view._view_func(new_sliced, tensor_visitor_fn=lambda t: lib.zeros(1, 2, 3))
            same = view._view_func(sliced)
        other = lib.zeros(3, 4, 5)[:, 1:2]
        moved = lib.slice_inverse(other, base, dim=1, start=1, end=2)
        return (view, view.stride(), view._base is sliced, swapped,
                same, moved.storage_offset(), moved,
                error_of(lib.slice_inverse, lib.zeros(2), base))

    both(prog)


def test_slice_inverse_gradient():
    def prog(lib):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        out = lib.slice_inverse(x[:, 1:3], x.detach(), 1, 1, 3)
        (out * lib.arange(12.0).view(3, 4)).sum().backward()
        return out, out.grad_fn.name(), x.grad

    both(prog)
