"""In-place view ops (t_, transpose_, squeeze_, as_strided_, ...) on views made in grad mode,
no_grad, inference mode, by a multi-output view op or inside a custom Function: the view keeps
how it was made, and later in-place ops raise what torch raises."""

from __future__ import annotations

import pytest

from tests.parity.harness import both, error_of

INPLACE_VIEWS = {
    "as_strided_": lambda v: v.as_strided_((1, 0), (2, 2)),
    "transpose_": lambda v: v.transpose_(0, 0),
    "t_": lambda v: v.t_(),
    "squeeze_": lambda v: v.squeeze_(0),
    "unsqueeze_": lambda v: v.unsqueeze_(0),
    "swapdims_": lambda v: v.swapdims_(0, 0),
}


def _view(lib, base, kind):
    if kind == "multi_view":
        return base.unbind()[0]
    if kind == "custom":
        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, grad):
                return grad

        return Func.apply(base)
    return base.view_as(base)


@pytest.mark.parametrize("op", list(INPLACE_VIEWS))
@pytest.mark.parametrize("kind", ["normal", "multi_view", "custom"])
def test_inplace_view_then_inplace(op, kind):
    def prog(lib):
        out = []
        for view_grad in (True, False):
            for op_grad in (True, False):
                for requires_grad in (True, False):
                    base = lib.rand(2, 3, requires_grad=requires_grad).clone()
                    with lib.set_grad_enabled(view_grad):
                        v = _view(lib, base, kind)
                    with lib.set_grad_enabled(op_grad):
                        first = error_of(INPLACE_VIEWS[op], v)
                    second = error_of(v.add_, 1) if first[0] == "ok" else None
                    out.append((first[0] if first[0] == "ok" else first, second and second[::2]))
        return out

    both(prog)


def test_inplace_view_in_inference_mode_keeps_how_the_view_was_made():
    def prog(lib):
        base = lib.rand(2, 3, requires_grad=True).clone()
        v = base.view_as(base)
        with lib.inference_mode():
            v.t_()
        w = base.unbind()[0]
        with lib.inference_mode():
            w.unsqueeze_(0)
        return error_of(v.add_, 1)[0], error_of(w.add_, 1)[1:]

    both(prog)


def test_multi_output_view_of_a_base_that_later_requires_grad():
    def prog(lib):
        b = lib.rand(2, 3)
        v = b.unbind()[0]
        b.add_(lib.ones(2, 3, requires_grad=True))
        return error_of(v.add_, 1)

    both(prog)
