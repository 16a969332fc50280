"""View ops: real memory sharing, shared version counters, `_base`, torch's strides and storage
offsets, multi-output views, in-place through views, and torch's error messages."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd._autograd.copy_slices import ViewRecovery

torch = pytest.importorskip("torch")

# (expression on `x`, input shape); each must give a view in torch and in retrograd
VIEW_EXPRS = [
    ("x.squeeze()", (2, 1, 3)),
    ("x.squeeze(1)", (2, 1, 3)),
    ("x.squeeze((0, 2))", (1, 3, 1)),
    ("x.unsqueeze(1)", (2, 3)),
    ("x.unsqueeze(-1)", (2, 3)),
    ("x.flatten()", (2, 3, 4)),
    ("x.flatten(1)", (2, 3, 4)),
    ("x.unflatten(1, (2, 2))", (3, 4)),
    ("x.movedim(0, -1)", (2, 3, 4)),
    ("x.moveaxis((0, 1), (2, 0))", (2, 3, 4)),
    ("x.narrow(1, 1, 2)", (3, 4)),
    ("x.select(1, 2)", (3, 4)),
    ("x.select(0, -1)", (3,)),
    ("x.diagonal()", (3, 4)),
    ("x.diagonal(1)", (3, 4)),
    ("x.diagonal(-1, 0, 2)", (3, 2, 4)),
    ("x.diagonal(2, -1, 1)", (2, 3, 4)),
    ("x.T", (3, 4)),
    ("x.mT", (2, 3, 4)),
    ("x.view_as(x)", (3, 4)),
    ("x[:1].expand_as(x)", (3, 4)),
    ("x.ravel()", (3, 4)),
    ("x[1]", (3, 4)),
    ("x[:, 1:]", (3, 4)),
    ("x[::2, 1::2]", (5, 4)),
    ("x[None, 1]", (3, 4)),
    ("x[..., 1]", (2, 3, 4)),
    ("x[...]", (3, 4)),
    ("x[:, :]", (3, 4)),
    ("x[1, 2]", (3, 4)),
    ("x[:, None, 1:3]", (3, 4)),
]

MULTI_EXPRS = [
    ("x.unbind(0)", (3, 4)),
    ("x.unbind(1)", (3, 4)),
    ("x.split(2)", (5, 2)),
    ("x.split([1, 3], 1)", (2, 4)),
    ("x.chunk(3, 1)", (2, 7)),
    ("torch.split(x, 1)", (2, 3)),
]


def _pair(shape, transposed=False):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape[::-1] if transposed else shape)
    if transposed:
        a = a.T
    return retrograd.tensor(a), torch.tensor(a)


def _eval(expr, x, lib):
    return eval(expr, {"torch": lib, "retrograd": lib}, {"x": x})  # noqa: S307 - test table


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("expr,shape", VIEW_EXPRS)
def test_view_geometry_matches_torch(expr, shape, transposed):
    if transposed and len(shape) < 2:
        pytest.skip("1-d")
    x, tx = _pair(shape, transposed)  # transposed: a non-contiguous base of the same shape
    y, ty = _eval(expr, x, retrograd), _eval(expr, tx, torch)
    assert y._is_view() == ty._is_view()  # flatten of a transposed base copies, as in torch
    assert tuple(y.shape) == tuple(ty.shape)
    assert y.stride() == ty.stride()
    assert y.storage_offset() == ty.storage_offset()
    np.testing.assert_array_equal(y.numpy(), ty.numpy())


@pytest.mark.parametrize("expr,shape", VIEW_EXPRS)
def test_view_shares_memory_version_and_base(expr, shape):
    base = retrograd.tensor(np.arange(float(np.prod(shape))).reshape(shape))
    y = _eval(expr, base, retrograd)
    assert y._is_view()
    assert y._base is base
    assert np.shares_memory(y.numpy(), base.numpy())
    if "expand" in expr:  # overlapping memory: torch refuses writes through it
        return
    v0 = base._version
    y.mul_(2)
    assert base._version == v0 + 1 == y._version
    # the write went through to the base
    ref = torch.arange(float(np.prod(shape))).reshape(shape)
    _eval(expr, ref, torch).mul_(2)
    np.testing.assert_array_equal(base.numpy(), ref.numpy())


def test_base_is_root_for_chains():
    base = retrograd.randn(4, 5, 6) if hasattr(retrograd, "randn") else retrograd.tensor(
        np.random.rand(4, 5, 6))
    v = base[1].diagonal()[1:].unsqueeze(0).squeeze(0)
    assert v._base is base
    u = base.unbind(0)[2].select(0, 1)
    assert u._base is base
    assert np.shares_memory(u.numpy(), base.numpy())


@pytest.mark.parametrize("expr,shape", MULTI_EXPRS)
def test_multi_output_views(expr, shape):
    x, tx = _pair(shape)
    outs, touts = _eval(expr, x, retrograd), _eval(expr, tx, torch)
    assert isinstance(outs, tuple) and len(outs) == len(touts)
    for o, t in zip(outs, touts):
        assert o._is_view() and o._base is x
        assert (tuple(o.shape), o.stride(), o.storage_offset()) == (
            tuple(t.shape), t.stride(), t.storage_offset())
        assert np.shares_memory(o.numpy(), x.numpy())


def test_multi_output_view_inplace_is_rejected_like_torch():
    for lib in (retrograd, torch):
        a = lib.ones(3, 2, requires_grad=True)
        b = a * 1
        part = b.unbind(0)[1]
        with pytest.raises(RuntimeError) as info:
            part.mul_(2)
        if lib is torch:
            expected = str(info.value)
        else:
            got = str(info.value)
    assert got == expected


def test_multi_output_view_inplace_allowed_without_grad():
    a = retrograd.zeros(3, 2)
    a.split(1)[1].fill_(5.0)
    np.testing.assert_array_equal(a.numpy(), [[0, 0], [5, 5], [0, 0]])


def test_unbind_backward_with_unused_outputs():
    a, ta = retrograd.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True), \
        torch.arange(6.0, dtype=torch.float64).reshape(3, 2).requires_grad_()
    for x in (a, ta):
        parts = x.unbind(0)
        (parts[1] * 3).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    assert a.grad.dtype == retrograd.float64


# --- in-place through views: CopySlices with both view-recovery strategies ------------------------

INPLACE_VIEW_EXPRS = ["x[1]", "x[:, 1:]", "x.diagonal()", "x.select(1, 0)", "x.narrow(0, 1, 2)",
                      "x[::2]", "x.unsqueeze(0)[0, 1:]", "x.t()[1]", "x.movedim(0, 1)[0]"]


@pytest.mark.parametrize("replay", [False, True])
@pytest.mark.parametrize("expr", INPLACE_VIEW_EXPRS)
def test_inplace_on_view_gradients(expr, replay):
    data = np.random.default_rng(1).standard_normal((3, 3))
    grads = []
    old = ViewRecovery.replay
    ViewRecovery.replay = replay
    try:
        for lib in (retrograd, torch):
            leaf = lib.tensor(data, requires_grad=True)
            w = lib.tensor(data + 1)
            x = leaf * 1
            v = _eval(expr, x, lib)
            v.mul_(2)
            assert x.grad_fn.name() == "torch::autograd::CopySlices"
            (x * w).sum().backward()
            grads.append(leaf.grad.numpy())
            if lib is retrograd:
                assert v.grad_fn is not None
    finally:
        ViewRecovery.replay = old
    np.testing.assert_allclose(grads[0], grads[1])


def test_leaf_view_inplace_error_matches_torch():
    msgs = []
    for lib in (retrograd, torch):
        leaf = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            leaf[0].mul_(2)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


# --- errors --------------------------------------------------------------------------------------

ERROR_EXPRS = [
    "x.select(0, 5)", "x.select(-3, 5)", "s.select(0, 0)", "x.select(3, 0)",
    "x.narrow(0, 4, 1)", "x.narrow(0, 1, 5)", "x.narrow(0, -4, 1)", "x.narrow(0, 1, -1)",
    "s.narrow(0, 0, 1)", "x.unbind(3)", "s.unbind(0)", "x.split(0)", "x.split(-1)",
    "x.split([1, 1])", "x.split([4, -1])", "x.chunk(0)", "torch.cat([])",
    "torch.cat([x, x[0]])", "torch.cat([x, x[:, :2]], 2)", "torch.cat([s, s])",
    "torch.cat([x, x], 3)", "torch.stack([])", "torch.stack([x, x[0]])", "torch.stack([x, x], 4)",
    "x.flip(0, 0)", "x.flip(3)", "x.roll(1, (0, 1))", "x.roll((1, 2))", "x.roll(1, 3)",
    "x.diagonal(0, 0, 0)", "x.diagonal(0, 1, -2)", "x.diagonal(0, 0, 3)",
    "torch.tril(torch.zeros(3))", "torch.triu(s)", "x.repeat(2, 2)", "x.repeat(-1, 1, 1)",
    "x.squeeze(3)", "x.squeeze((0, 0))", "x.squeeze((0, 3))", "s.squeeze(1)", "x.unsqueeze(4)",
    "x.flatten(2, 1)", "x.flatten(3)", "x.unflatten(1, (3, 2))", "x.unflatten(1, ())",
    "x.movedim(0, 3)", "x.movedim((0, 1), (1,))", "x.movedim((0, 0), (1, 2))",
    "x.movedim((0, 1), (1, 1))", "x.permute(0, 1, 1)", "x.transpose(0, 3)", "x.t()",
    "x.view(7)",
]


@pytest.mark.parametrize("expr", ERROR_EXPRS)
def test_errors_match_torch(expr):
    results = []
    for lib in (torch, retrograd):
        env = {"x": lib.zeros(3, 4, 5), "s": lib.tensor(1.0), "torch": lib}
        with pytest.raises(Exception) as info:
            eval(expr, env)  # noqa: S307 - test table
        results.append((type(info.value), str(info.value)))
    assert results[1] == results[0]


# --- dtypes --------------------------------------------------------------------------------------


def test_cat_and_stack_promote_like_torch():
    cases = [("int64", "float32"), ("bool", "int32"), ("uint8", "int8"), ("float16", "float64")]
    for a, b in cases:
        xa, xb = np.ones((2, 2), a), np.zeros((1, 2), b)
        got = retrograd.cat([retrograd.tensor(xa), retrograd.tensor(xb)])
        want = torch.cat([torch.tensor(xa), torch.tensor(xb)])
        assert got.dtype.name == str(want.dtype).replace("torch.", "")
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        got = retrograd.stack([retrograd.tensor(xa[0]), retrograd.tensor(xb[0])])
        want = torch.stack([torch.tensor(xa[0]), torch.tensor(xb[0])])
        assert got.dtype.name == str(want.dtype).replace("torch.", "")


@pytest.mark.parametrize("dtype", ["int64", "bool", "int32", "float16"])
def test_copy_ops_keep_dtype(dtype):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    x, tx = retrograd.tensor(a), torch.tensor(a)
    for expr in ["x.flip(0)", "x.roll(1, 1)", "x.tril()", "x.triu(1)", "x.repeat(2, 1)",
                 "x.tile((2,))", "x.diagonal()", "torch.cat([x, x])", "x.unbind(1)[0]"]:
        got, want = _eval(expr, x, retrograd), _eval(expr, tx, torch)
        assert got.dtype.name == str(want.dtype).replace("torch.", "")
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_select_backward_and_slice_backward_are_differentiable():
    x = retrograd.tensor(np.random.rand(3, 4), requires_grad=True)
    assert retrograd.autograd.gradgradcheck(lambda t: t[1, 1:3] * t[2, ::2], (x,))
    assert retrograd.autograd.gradgradcheck(lambda t: t.diagonal(1) ** 2, (x,))
