"""The dual fast path (NOTE [Dual fast path]) gives the general rule's primals and tangents, and
leaves to the general rule what it does not cover."""

from __future__ import annotations

import re

import numpy as np
import pytest

import retrograd
from retrograd._ops import dispatch
from retrograd._ops import forward_ad_fast as fast
from retrograd.autograd import forward_ad as fwAD
from retrograd.func import jvp
from retrograd.utils._python_dispatch import TorchDispatchMode
from tests.forward_ad.test_op_jvps import _directions
from tests.test_ops_generated import GRAD, _func


class _Spy:
    """Records the ops the fast path did (and the ones it declined)."""

    def __init__(self) -> None:
        self.done: list = []
        self.declined: list = []

    def __enter__(self):
        self.inner = dispatch.dual_fast[1]
        spy = self

        class Paths:  # what dispatch indexes by op
            def __getitem__(self, op):
                fn = spy.inner[op]

                def call(args):
                    out = fn(args)
                    (spy.declined if out is NotImplemented else spy.done).append(op.name)
                    return out
                return call

        dispatch.dual_fast[1] = Paths()
        return self

    def __exit__(self, *exc) -> None:
        dispatch.dual_fast[1] = self.inner


class _general:
    def __enter__(self) -> None:
        fast.force_general[0] = True

    def __exit__(self, *exc) -> None:
        fast.force_general[0] = False


def _run(f, leaves, vs):
    """(primal, tangent or None, the tangent's identity among the inputs') of each output."""
    with fwAD.dual_level():
        duals = [fwAD.make_dual(t.detach(), v) for t, v in zip(leaves, vs)]
        res = []
        for o in f(*duals):
            p, t = fwAD.unpack_dual(o)
            same = [k for k, v in enumerate(vs) if t is not None and t is fwAD.unpack_dual(
                duals[k]).tangent]
            res.append((p.detach().clone(), None if t is None else t.detach().clone(), same))
    return res


def _same(a, b, exact: bool = True) -> None:
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    if exact:
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    else:  # an array formula may round differently from its Tensor formula (gelu's tanh form)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("sample", GRAD, ids=lambda s: s.id)
def test_fast_path_gives_the_general_tangents(sample):
    f, leaves = _func(sample)
    if not leaves:
        pytest.skip("no differentiable inputs")
    vs = _directions(leaves, 7)
    try:
        with _general():
            want = _run(f, leaves, vs)
    except RuntimeError as e:  # the prod samples with two zeros: both refuse alike
        with pytest.raises(RuntimeError, match=re.escape(str(e))):
            _run(f, leaves, vs)
        return
    got = _run(f, leaves, vs)
    assert len(got) == len(want)
    for (gp, gt, gs), (wp, wt, ws) in zip(got, want):
        _same(gp, wp)
        assert (gt is None) == (wt is None)
        if gt is not None:
            _same(gt, wt, exact=False)
        assert gs == ws  # a tangent passed on is the input's tangent itself in both


FAST_OPS = [
    ("sin", lambda x, y: x.sin()), ("tanh", lambda x, y: x.tanh()),
    ("exp", lambda x, y: x.exp()), ("log", lambda x, y: (x * x + 1).log()),
    ("sigmoid", lambda x, y: x.sigmoid()), ("relu", lambda x, y: x.relu()),
    ("div", lambda x, y: x / (y * y + 1)), ("mul", lambda x, y: x * y),
    ("mul_scalar", lambda x, y: x * 0.9), ("add", lambda x, y: x + y * 2),
    ("sub", lambda x, y: x - y), ("pow", lambda x, y: (x * x + 1) ** 1.5),
    ("sqrt", lambda x, y: (x * x + 1).sqrt()), ("abs", lambda x, y: x.abs()),
    ("sum", lambda x, y: x.sum()), ("mm", lambda x, y: x.reshape(3, 4) @ y.reshape(4, 3)),
    ("broadcast", lambda x, y: x.reshape(3, 4) * y.reshape(3, 4)[:1]),
    ("clamp", lambda x, y: x.clamp(-0.5, 0.5)), ("neg", lambda x, y: -x),
]


@pytest.mark.parametrize("name,fn", FAST_OPS, ids=[n for n, _ in FAST_OPS])
@pytest.mark.parametrize("dtype", [retrograd.float16, retrograd.float32, retrograd.float64])
def test_fast_path_taken_and_exact(name, fn, dtype):
    rng = np.random.default_rng(0)
    x, y, vx, vy = (retrograd.tensor(rng.standard_normal(12), dtype=dtype) for _ in range(4))
    with _general():
        wp, wt = jvp(fn, (x, y), (vx, vy))
    with _Spy() as spy:
        gp, gt = jvp(fn, (x, y), (vx, vy))
    assert spy.done
    _same(gp, wp)
    _same(gt, wt)


def test_chain_matches_torch():
    import torch

    rng = np.random.default_rng(1)
    x, v = rng.standard_normal(64), rng.standard_normal(64)

    def f(lib):
        def g(a):
            for _ in range(3):
                a = (a.sin() * 0.9 + 0.1).tanh()
            return a
        return g

    with _Spy() as spy:
        p, t = jvp(f(retrograd), (retrograd.tensor(x),), (retrograd.tensor(v),))
    assert {"sin", "mul.Tensor", "add.Tensor", "tanh"} <= set(spy.done) and not spy.declined
    tp, tt = torch.func.jvp(f(torch), (torch.tensor(x),), (torch.tensor(v),))
    np.testing.assert_allclose(p.numpy(), tp.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1e-12, atol=1e-12)


def _declines(fn, *args) -> list:
    with _Spy() as spy:
        fn(*args)
    return spy.declined


def test_views_and_inplace_ops_go_the_general_way():
    x, v = retrograd.randn(3, 4), retrograd.randn(3, 4)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), v.clone())
        assert "t" in _declines(lambda: d.t())
        assert "mul_.Tensor" in _declines(lambda: d.mul_(2.0))
        # the in-place write reached the tangent; a view's tangent is the view of it
        np.testing.assert_array_equal(fwAD.unpack_dual(d).tangent.numpy(), v.numpy() * 2)
        row = d[1]
        np.testing.assert_array_equal(fwAD.unpack_dual(row.sin()).tangent.numpy(),
                                      (v.numpy()[1] * 2) * np.cos(x.numpy()[1] * 2))


def test_other_dtypes_and_numbers_go_the_general_way():
    with fwAD.dual_level():
        d = fwAD.make_dual(retrograd.randn(4), retrograd.randn(4))
        e = fwAD.make_dual(retrograd.randn(4, dtype=retrograd.float64),
                           retrograd.randn(4, dtype=retrograd.float64))
        assert _declines(lambda: d * e) == ["mul.Tensor"]  # promotion
        assert _declines(lambda: d * True) == ["mul.Tensor"]  # a bool
        out = d * e
        assert fwAD.unpack_dual(out).tangent.dtype == retrograd.float64


def test_inputs_that_require_grad_go_the_general_way():
    x = retrograd.randn(4, requires_grad=True)
    v = retrograd.randn(4)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        assert _declines(lambda: d.sin()) == ["sin"]
        y = d.sin()
        assert y.requires_grad
        (g,) = retrograd.autograd.grad(fwAD.unpack_dual(y).tangent.sum(), x)
    np.testing.assert_allclose(g.numpy(), -np.sin(x.detach().numpy()) * v.numpy(), rtol=1e-6)


def test_another_mode_sees_every_op():
    class Log(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(func._op.name)
            return func(*args, **(kwargs or {}))

    x, v = retrograd.randn(5), retrograd.randn(5)
    with _Spy() as spy, fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        with Log() as log:
            y = d.sin()
        t = fwAD.unpack_dual(y).tangent
    assert "sin" in log.seen and "sin" not in spy.done
    np.testing.assert_allclose(t.numpy(), v.numpy() * np.cos(x.numpy()), rtol=1e-6)


def _subclass_copy(t):
    class Sub(retrograd.Tensor):
        pass

    sub = Sub.__new__(Sub)
    for slot in ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_grad",
                 "_version_counter", "_view", "_grad_acc", "_meta"):
        setattr(sub, slot, getattr(t, slot))
    return sub


def test_subclasses_go_the_general_way():
    from retrograd._ops.registry import OPS

    x, v = retrograd.randn(4), retrograd.randn(4)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, _subclass_copy(v))  # a subclass tangent
        assert _declines(lambda: d.sin()) == ["sin"]
        np.testing.assert_allclose(fwAD.unpack_dual(d.sin()).tangent.numpy(),
                                   v.numpy() * np.cos(x.numpy()), rtol=1e-6)
        assert fast.dual_fast(OPS["sin"], (_subclass_copy(x),)) is NotImplemented
        plain = fwAD.make_dual(retrograd.randn(4), v)
        assert fast.dual_fast(OPS["sin"], (plain,)) is not NotImplemented


def test_forward_ad_disabled_and_nested_levels():
    x, v = retrograd.randn(3), retrograd.randn(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        with fwAD._set_fwd_grad_enabled(False), _Spy() as spy:
            y = d.sin()
        assert not spy.done and fwAD.unpack_dual(y).tangent is None
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
    # jvp of jvp takes the double-vjp route inside: still the right second derivative
    def f(a):
        return jvp(lambda b: b.sin(), (a,), (v,))[1]

    _, t2 = jvp(f, (x,), (v,))
    np.testing.assert_allclose(t2.detach().numpy(), -np.sin(x.numpy()) * v.numpy() ** 2, rtol=1e-5)


def test_ops_on_tensors_without_tangents_run_without_the_mode():
    """Views, reductions and Tensor[] ops of tensors that carry no tangent (weights inside a
    jvp) skip the general mode, and come out as outside the level: no tangent."""
    w = retrograd.randn(3, 4)
    p = retrograd.nn.Parameter(retrograd.randn(4))
    x, v = retrograd.randn(3, 4), retrograd.randn(3, 4)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        with _Spy() as spy:
            outs = {"t": w.t(), "cat": retrograd.cat([w, w]), "sum": w.sum(0),
                    "view": p.view(2, 2), "index": w[1:, ::2], "add_": w.clone().add_(1.0)}
        assert not spy.declined
        assert {"t", "cat", "sum.dim_IntList", "view", "add_.Tensor"} <= set(spy.done)
        for out in outs.values():
            assert fwAD.unpack_dual(out).tangent is None
        # one tensor with a tangent among them: the general rule, and its tangent
        assert _declines(lambda: retrograd.cat([w, d])) == ["cat"]
        t = fwAD.unpack_dual(retrograd.cat([w, d])).tangent
        np.testing.assert_array_equal(t.numpy(), np.concatenate([np.zeros((3, 4)), v.numpy()]))
        # a view made before its base had a tangent reaches the base's tangent
        base = retrograd.zeros(3, 4)
        row = base[0]
        base.copy_(d)
        assert _declines(lambda: row.view(2, 2)) == ["view"]
        np.testing.assert_array_equal(fwAD.unpack_dual(row.view(2, 2)).tangent.numpy(),
                                      v.numpy()[0].reshape(2, 2))
    np.testing.assert_array_equal(outs["t"].numpy(), w.numpy().T)
    np.testing.assert_array_equal(outs["cat"].numpy(), np.concatenate([w.numpy()] * 2))
    np.testing.assert_array_equal(outs["add_"].numpy(), w.numpy() + 1)
    assert outs["index"]._base is w and outs["view"]._base is p


def test_make_dual_keeps_a_tangent_laid_out_as_its_primal():
    x = retrograd.randn(3, 4)
    with fwAD.dual_level():
        v = retrograd.randn(3, 4)
        d = fwAD.make_dual(x, v)
        assert fwAD.unpack_dual(d).tangent is v and d._base is x
        # laid out otherwise (transposed): a copy laid out as the primal, as torch makes
        vt = retrograd.randn(4, 3).t()
        e = fwAD.make_dual(retrograd.randn(3, 4), vt)
        te = fwAD.unpack_dual(e).tangent
        assert te is not vt and te.stride() == (4, 1)
        np.testing.assert_array_equal(te.numpy(), vt.numpy())
        # a primal that is itself a slice: the tangent spans a storage as large
        big = retrograd.randn(5, 4)
        f = fwAD.make_dual(big[1:4], v)
        tf = fwAD.unpack_dual(f).tangent
        assert tf is not v and tf.storage_offset() == 4
        np.testing.assert_array_equal(tf.numpy(), v.numpy())


def test_jvp_outputs_are_detached_with_zero_tangents_where_independent():
    x, v = retrograd.randn(4), retrograd.randn(4)
    c = retrograd.randn(4)
    (y, z), (ty, tz) = jvp(lambda a: (a.sin(), c * 2), (x,), (v,))
    assert fwAD.unpack_dual(y).tangent is None and y._base is None
    np.testing.assert_allclose(ty.numpy(), np.cos(x.numpy()) * v.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(z.numpy(), c.numpy() * 2)
    np.testing.assert_array_equal(tz.numpy(), np.zeros(4, np.float32))
    assert not y.requires_grad and not ty.requires_grad
