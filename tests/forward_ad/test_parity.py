"""forward_ad against torch.autograd.forward_ad: values, tangents, views, in-place, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd
from retrograd.autograd import forward_ad as rfw
from retrograd.autograd.gradcheck import GradcheckError

tfw = torch.autograd.forward_ad


def _pair(shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    return torch.tensor(a), retrograd.tensor(a)


def _both(program):
    """Run program(lib, fw, x, t) on torch and on retrograd; compare what it returns."""
    tx, rx = _pair((3, 4), 0)
    tt, rt = _pair((3, 4), 1)
    with tfw.dual_level():
        want = program(torch, tfw, tx, tt)
    with rfw.dual_level():
        got = program(retrograd, rfw, rx, rt)
    for w, g in zip(want, got):
        if w is None:
            assert g is None
        elif isinstance(w, torch.Tensor):
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-10)
        else:
            assert w == g


PROGRAMS = {
    "pointwise": lambda L, fw, x, t: fw.unpack_dual((fw.make_dual(x, t).sin() * 3).exp()),
    "matmul": lambda L, fw, x, t: fw.unpack_dual(fw.make_dual(x, t) @ x.T),
    "reduction": lambda L, fw, x, t: fw.unpack_dual(fw.make_dual(x, t).softmax(1).sum(0)),
    "sort": lambda L, fw, x, t: fw.unpack_dual(L.sort(fw.make_dual(x, t), 1)[0]),
    "cat": lambda L, fw, x, t: fw.unpack_dual(L.cat([fw.make_dual(x, t), x])),
    "view_base": lambda L, fw, x, t: (
        fw.unpack_dual(fw.make_dual(x, t)[1:].T).tangent._base is t,),
    "same_tangent": lambda L, fw, x, t: (fw.unpack_dual(fw.make_dual(x, t)).tangent is t,),
    "no_tangent": lambda L, fw, x, t: (fw.unpack_dual(x).tangent,),
    "inplace_mul": lambda L, fw, x, t: _inplace_mul(L, fw, x, t),
    "inplace_view": lambda L, fw, x, t: _inplace_view(L, fw, x, t),
    "view_then_base_write": lambda L, fw, x, t: _view_then_base(L, fw, x, t),
}


def _inplace_mul(L, fw, x, t):
    b = x.clone() + 1
    b.mul_(fw.make_dual(x, t))
    return fw.unpack_dual(b)


def _inplace_view(L, fw, x, t):
    base = L.zeros(3, 4, dtype=x.dtype)
    v = base[1]
    v.add_(fw.make_dual(x[0], t[0]))
    return fw.unpack_dual(base).tangent, fw.unpack_dual(v).tangent


def _view_then_base(L, fw, x, t):
    base = L.zeros(3, 4, dtype=x.dtype)
    v = base[:, 1]
    base.add_(fw.make_dual(x, t))
    return (fw.unpack_dual(v).tangent,)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name):
    _both(PROGRAMS[name])


def test_tangents_go_with_the_level():
    for lib, fw in ((torch, tfw), (retrograd, rfw)):
        x = lib.ones(2, dtype=lib.float64)
        with fw.dual_level():
            d = fw.make_dual(x, lib.ones(2, dtype=lib.float64))
        assert fw.unpack_dual(d).tangent is None


def _error(lib, fw, thunk):
    try:
        thunk(lib, fw)
    except (RuntimeError, ValueError) as e:
        return type(e).__name__, str(e).replace("retrograd.", "torch.")
    return None


ERRORS = {
    "nested": lambda L, fw: fw.dual_level().__enter__(),
    "size": lambda L, fw: fw.make_dual(L.ones(3), L.ones(4)),
    "int_primal": lambda L, fw: fw.make_dual(L.arange(3), L.ones(3)),
    "int_tangent": lambda L, fw: fw.make_dual(L.ones(3), L.arange(3)),
    "twice": lambda L, fw: fw.make_dual(fw.make_dual(L.ones(3), L.ones(3)), L.ones(3)),
    "bad_level": lambda L, fw: fw.make_dual(L.ones(3), L.ones(3), level=5),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    results = []
    for lib, fw in ((torch, tfw), (retrograd, rfw)):
        with fw.dual_level():
            results.append(_error(lib, fw, ERRORS[name]))
    assert results[0] is not None and results[0] == results[1]


def test_errors_outside_a_level():
    for lib, fw in ((torch, tfw), (retrograd, rfw)):
        with pytest.raises(RuntimeError, match="no level exists"):
            fw.make_dual(lib.ones(2), lib.ones(2))
        with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
            fw.exit_dual_level()


def test_gradcheck_forward_ad():
    x = retrograd.rand(3, dtype=retrograd.float64, requires_grad=True)
    assert retrograd.autograd.gradcheck(lambda a: (a.sin() * a).cumsum(0), (x,),
                                        check_forward_ad=True)

    assert retrograd.autograd.gradcheck(lambda a: a.exp(), (x,), check_forward_ad=True,
                                        check_backward_ad=False)


def test_gradcheck_forward_ad_catches_a_wrong_tangent():
    x = retrograd.rand(3, dtype=retrograd.float64, requires_grad=True)

    def f(a):
        with rfw._set_fwd_grad_enabled(False):  # no tangent reaches the output
            return a.exp()

    with pytest.raises(GradcheckError,
                       match="Jacobian computed with forward mode mismatch"):
        retrograd.autograd.gradcheck(f, (x,), check_forward_ad=True, check_backward_ad=False)


def _function_program(lib, fw):
    seen = []

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen.append(fw.unpack_dual(x).tangent)  # forward sees no tangent
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k, x + 1

        @staticmethod
        def jvp(ctx, xt, yt, kt):
            x, y = ctx.saved_tensors
            seen.append((yt, kt))  # zeros for a tensor without tangent, None for a number
            return xt * y * ctx.k + x * yt * ctx.k, xt

        @staticmethod
        def backward(ctx, g, h):
            return None, None, None

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with fw.dual_level():
        d = fw.make_dual(lib.ones(2, dtype=lib.float64), lib.full((2,), 3.0, dtype=lib.float64))
        a, b = Scale.apply(d, lib.ones(2, dtype=lib.float64) * 2, 5.0)
        out = (fw.unpack_dual(a).tangent, fw.unpack_dual(b).tangent)
        with pytest.raises(NotImplementedError) as err:
            NoJvp.apply(d)
    return seen, out, str(err.value)


def test_custom_function_jvp():
    want = _function_program(torch, tfw)
    got = _function_program(retrograd, rfw)
    assert got[0][0] is None and want[0][0] is None
    np.testing.assert_array_equal(got[0][1][0].numpy(), want[0][1][0].numpy())
    assert got[0][1][1] is None and want[0][1][1] is None
    for g, w in zip(got[1], want[1]):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert got[2] == want[2]


def test_op_without_forward_derivative():
    messages = []
    for lib, fw in ((torch, tfw), (retrograd, rfw)):
        with fw.dual_level():
            d = fw.make_dual(lib.rand(3), lib.ones(3))
            with pytest.raises(NotImplementedError) as err:
                lib.bernoulli(d, 0.5)
            assert fw.unpack_dual(d < 0.5).tangent is None  # comparisons carry none
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_detach_drops_the_tangent():
    # detach() gives a tensor without tangent; detach_() removes the tensor's own, as torch
    def program(lib, fw, x, t):
        dual = fw.make_dual(x, t).clone()
        kept = fw.unpack_dual(dual.detach() * 2).tangent
        dual.detach_()
        return kept, fw.unpack_dual(dual * 2).tangent, fw.unpack_dual(dual * 2).primal

    _both(program)
    with rfw.dual_level():
        dual = rfw.make_dual(retrograd.ones(2), retrograd.ones(2)).clone()
        assert rfw.unpack_dual(dual).tangent is not None
        dual.detach_()
        assert rfw.unpack_dual(dual).tangent is None
