"""A custom Function's jvp is checked as torch checks it: same programs, same outcome, same
error text (in-place on dirty inputs, views of inputs, non-differentiable outputs, counts)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd


def _fw(lib):
    return lib.autograd.forward_ad


def _dirty_fn(lib, mode):
    class InplaceMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return 2 * g

        @staticmethod
        def jvp(ctx, t):
            if mode == "inplace":
                return t.mul_(2)
            if mode == "unchanged":
                return t
            t.mul_(2)
            return t.clone()  # modified in place, but another tensor returned

    return InplaceMul


def _view_fn(lib, mode):
    class Narrow(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.narrow(0, 0, 2)

        @staticmethod
        def backward(ctx, g):
            out = g.new_zeros((4, 3))
            out.narrow(0, 0, 2).copy_(g)
            return out

        @staticmethod
        def jvp(ctx, t):
            res = t.narrow(0, 0, 2)
            if mode == "clone":
                res = res.clone()
            elif mode == "view_of_clone":
                res = res.clone().view_as(res)
            return res

    return Narrow


def _as_is_fn(lib, make):
    class AsIs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            return make(t)

    return AsIs


def _outcome(fn):
    """(tangent as a list, None) or (None, error text)."""
    try:
        t = fn()
    except RuntimeError as e:
        return None, str(e)
    return (None if t is None else np.asarray(t.tolist())), None


def _run(lib, build, mode, view_input=False):
    fw = _fw(lib)
    x = lib.arange(12, dtype=lib.float64).reshape(4, 3)

    def program():
        with fw.dual_level():
            d = fw.make_dual(x.clone(), lib.ones(4, 3, dtype=lib.float64))
            if view_input:
                d = d.view_as(d)
            out = build(lib, mode).apply(d)
            return fw.unpack_dual(out).tangent

    return _outcome(program)


def _same(want, got):
    assert (want[1] is None) == (got[1] is None), (want, got)
    if want[1] is not None:
        assert got[1] == want[1]
    elif want[0] is None:
        assert got[0] is None
    else:
        np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("mode", ["inplace", "unchanged", "other_tensor"])
def test_dirty_input_tangent_must_change_in_place(mode):
    _same(_run(torch, _dirty_fn, mode), _run(retrograd, _dirty_fn, mode))


@pytest.mark.parametrize("mode", ["ok", "clone", "view_of_clone"])
@pytest.mark.parametrize("view_input", [False, True])
def test_view_output_needs_a_view_tangent(mode, view_input):
    want = _run(torch, _view_fn, mode, view_input)
    got = _run(retrograd, _view_fn, mode, view_input)
    _same(want, got)
    if mode != "ok":
        assert got[1] is not None  # the case is an error, not a silent tangent


@pytest.mark.parametrize("make", ["view_as", "self", "double"])
def test_input_returned_as_is_is_a_view(make):
    fns = {"view_as": lambda t: t.view_as(t), "self": lambda t: t, "double": lambda t: t * 2}
    want = _run(torch, lambda lib, m: _as_is_fn(lib, fns[m]), make)
    got = _run(retrograd, lambda lib, m: _as_is_fn(lib, fns[m]), make)
    _same(want, got)


def _non_diff_program(lib, wrong):
    fw = _fw(lib)

    class Func(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, (x_t.clone() if wrong else None)

    with fw.dual_level():
        d = fw.make_dual(lib.tensor(2.0), lib.tensor(1.0))
        try:
            _, out = Func.apply(d, lib.tensor(3.0))
        except RuntimeError as e:
            return "error", str(e)
        return "tangent", fw.unpack_dual(out).tangent


@pytest.mark.parametrize("wrong", [False, True])
def test_non_differentiable_output_gets_no_tangent(wrong):
    want = _non_diff_program(torch, wrong)
    got = _non_diff_program(retrograd, wrong)
    assert want[0] == got[0]
    if want[0] == "error":
        assert got[1] == want[1]
    else:
        assert want[1] is None and got[1] is None


def _int_input_program(lib):
    fw = _fw(lib)
    seen = []

    class Func(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            seen.append(y_t)
            return x_t, None

    with fw.dual_level():
        d = fw.make_dual(lib.tensor(2.0), lib.tensor(1.0))
        _, out = Func.apply(d, lib.tensor(3))
        return seen, fw.unpack_dual(out).tangent


def test_integer_input_gets_no_zero_tangent():
    for lib in (torch, retrograd):
        seen, tangent = _int_input_program(lib)
        assert seen == [None] and tangent is None


def _count_program(lib):
    fw = _fw(lib)

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone(), x.clone()

        @staticmethod
        def jvp(ctx, t):
            return (t,)

    with fw.dual_level():
        d = fw.make_dual(lib.ones(2), lib.ones(2))
        with pytest.raises(RuntimeError) as err:
            Two.apply(d)
    return str(err.value)


def test_wrong_number_of_tangents():
    assert _count_program(retrograd) == _count_program(torch)


def test_failed_check_leaves_no_tangent_set():
    fw = _fw(retrograd)

    class Pair(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, x_t.clone()

    with fw.dual_level():
        d = fw.make_dual(retrograd.tensor(2.0), retrograd.tensor(1.0))
        with pytest.raises(RuntimeError):
            Pair.apply(d, retrograd.tensor(3.0))
        # the input keeps its own tangent, untouched
        assert fw.unpack_dual(d).tangent.item() == 1.0
