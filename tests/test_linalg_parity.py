"""Matrix products vs torch: error types and messages, integer dtypes, graph structure, second
derivatives. (Values and first gradients of every op are covered by the generated op tests.)"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _arrays(shapes, dtype="float32"):
    out = []
    for s in shapes:
        if np.dtype(dtype).kind in "iu":
            out.append(RNG.integers(-3, 4, size=s).astype(dtype))
        elif np.dtype(dtype).kind == "b":
            out.append(RNG.integers(0, 2, size=s).astype(bool))
        else:
            out.append(RNG.standard_normal(s).astype(dtype))
    return out


def _tensors(lib, arrays, requires_grad=False):
    conv = retrograd.from_numpy if lib is retrograd else torch.from_numpy
    ts = [conv(a.copy()) for a in arrays]
    if requires_grad:
        for t in ts:
            if t.is_floating_point():
                t.requires_grad_(True)
    return ts


def assert_same_error(fn, shapes, dtypes=None, requires_grad=True):
    """fn(lib, *tensors) raises the same exception type and message in retrograd and torch."""
    dtypes = dtypes or ["float32"] * len(shapes)
    arrays = [_arrays([s], d)[0] for s, d in zip(shapes, dtypes)]
    errors = []
    for lib in (torch, retrograd):
        with pytest.raises(Exception) as info:  # noqa: PT011 - compared with torch's below
            fn(lib, *_tensors(lib, arrays, requires_grad))
        errors.append(info.value)
    theirs, ours = errors
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


def _mm(lib, a, b):
    return lib.mm(a, b)


MATMUL_ERRORS = [
    ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 5)), ((2, 3), (4, 5)), ((5, 2, 3), (4, 5)),
    ((5, 2, 3), (4,)), ((3,), (5, 4, 5)), ((5, 2, 3), (5, 4, 5)), ((5, 2, 3), (6, 3, 5)),
    ((), (3,)), ((3,), ()), ((3,), (2, 3, 4, 5)),
]


@pytest.mark.parametrize("shapes", MATMUL_ERRORS, ids=str)
@pytest.mark.parametrize("requires_grad", [True, False])
def test_matmul_shape_errors(shapes, requires_grad):
    assert_same_error(lambda lib, a, b: lib.matmul(a, b), shapes, requires_grad=requires_grad)


@pytest.mark.parametrize("fn, shapes, dtypes", [
    (_mm, [(2, 3), (3,)], None),
    (_mm, [(3,), (3, 4)], None),
    (_mm, [(2, 3), (4, 5)], None),
    (_mm, [(2, 3), (3, 4)], ["float32", "float64"]),
    (_mm, [(2, 3), (3, 4)], ["float32", "int64"]),
    (_mm, [(2, 3), (3, 4)], ["int32", "int64"]),
    (_mm, [(2, 3), (3, 4)], ["float32", "float16"]),
    (_mm, [(2, 3), (3, 4)], ["bool", "bool"]),
    (lambda lib, a, b: lib.matmul(a, b), [(2, 3), (3, 4)], ["float32", "float64"]),
    (lambda lib, a, b: lib.matmul(a, b), [(3,), (3,)], ["float32", "float64"]),
    (lambda lib, a, b: lib.matmul(a, b), [(5, 2, 3), (5, 3, 4)], ["float32", "float64"]),
    (lambda lib, a, b: lib.matmul(a, b), [(2, 3), (3,)], ["bool", "bool"]),
    (lambda lib, a, b: lib.bmm(a, b), [(5, 2, 3), (5, 4, 4)], None),
    (lambda lib, a, b: lib.bmm(a, b), [(5, 2, 3), (4, 3, 4)], None),
    (lambda lib, a, b: lib.bmm(a, b), [(2, 3), (3, 4)], None),
    (lambda lib, a, b: lib.bmm(a, b), [(5, 2, 3), (3, 4)], None),
    (lambda lib, a, b: lib.bmm(a, b), [(5, 2, 3), (5, 3, 4)], ["float32", "float64"]),
    (lambda lib, a, b: lib.bmm(a, b), [(5, 2, 3), (5, 3, 4)], ["bool", "bool"]),
    (lambda lib, a, b: lib.mv(a, b), [(2, 3), (4,)], None),
    (lambda lib, a, b: lib.mv(a, b), [(2, 3), (3, 1)], None),
    (lambda lib, a, b: lib.mv(a, b), [(3,), (3,)], None),
    (lambda lib, a, b: lib.mv(a, b), [(2, 3), (3,)], ["float32", "float64"]),
    (lambda lib, a, b: lib.mv(a, b), [(2, 3), (3,)], ["float64", "float32"]),
    (lambda lib, a, b: lib.mv(a, b), [(2, 3), (3,)], ["bool", "bool"]),
    (lambda lib, a, b: lib.dot(a, b), [(3,), (4,)], None),
    (lambda lib, a, b: lib.dot(a, b), [(3, 1), (3,)], None),
    (lambda lib, a, b: lib.dot(a, b), [(3,), (3,)], ["float32", "float64"]),
    (lambda lib, a, b: lib.dot(a, b), [(3,), (3,)], ["bool", "bool"]),
    (lambda lib, a, b: lib.vdot(a, b), [(3,), (4,)], None),
    (lambda lib, a, b: lib.outer(a, b), [(3, 1), (4,)], None),
    (lambda lib, a, b: lib.outer(a, b), [(3,), (4, 1)], None),
], ids=lambda v: str(v) if isinstance(v, list) else "")
def test_product_errors(fn, shapes, dtypes):
    assert_same_error(fn, shapes, dtypes)


def _addmm(lib, s, a, b):
    return lib.addmm(s, a, b)


@pytest.mark.parametrize("fn, shapes, dtypes", [
    (_addmm, [(5,), (2, 3), (3, 4)], None),
    (_addmm, [(3, 4), (2, 3), (3, 4)], None),
    (_addmm, [(4,), (2, 3), (4, 4)], None),
    (_addmm, [(4,), (3,), (3, 4)], None),
    (_addmm, [(4,), (2, 3), (3,)], None),
    (_addmm, [(1, 1, 4), (2, 3), (3, 4)], None),
    (_addmm, [(4,), (2, 3), (3, 4)], ["float64", "float32", "float32"]),
    (_addmm, [(4,), (2, 3), (3, 4)], ["float32", "float64", "float32"]),
    (_addmm, [(4,), (2, 3), (3, 4)], ["float32", "float32", "float64"]),
    (lambda lib, s, a, b: lib.addmv(s, a, b), [(3,), (2, 3), (3,)], None),
    (lambda lib, s, a, b: lib.addmv(s, a, b), [(2,), (2, 3), (4,)], None),
    (lambda lib, s, a, b: lib.addmv(s, a, b), [(2, 1), (2, 3), (3,)], None),
    (lambda lib, s, a, b: lib.addmv(s, a, b), [(2,), (2, 3), (3,)],
     ["float64", "float32", "float32"]),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [(4,), (5, 2, 3), (5, 4, 4)], None),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [(3,), (5, 2, 3), (5, 3, 4)], None),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [(6, 2, 4), (5, 2, 3), (5, 3, 4)], None),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [(4,), (2, 3), (5, 3, 4)], None),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [(4,), (5, 2, 3), (5, 3)], None),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [(4,), (5, 2, 3), (5, 3, 4)],
     ["float32", "float64", "float32"]),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [(4,), (5, 2, 3), (5, 3, 4)],
     ["float32", "float32", "float64"]),
    (lambda lib, s, a, b: lib.addbmm(s, a, b), [(4,), (5, 2, 3), (4, 3, 4)], None),
    (lambda lib, s, a, b: lib.addbmm(s, a, b), [(4,), (5, 2, 3), (5, 4, 4)], None),
    (lambda lib, s, a, b: lib.addbmm(s, a, b), [(3,), (5, 2, 3), (5, 3, 4)], None),
    (lambda lib, s, a, b: lib.addbmm(s, a, b), [(4,), (5, 2, 3), (5, 3, 4)],
     ["float64", "float32", "float32"]),
], ids=lambda v: str(v) if isinstance(v, list) else "")
def test_fused_product_errors(fn, shapes, dtypes):
    assert_same_error(fn, shapes, dtypes)


@pytest.mark.parametrize("args", [
    [(2, 3), (4, 5), (4,)], [(5, 2, 3), (4, 5), (4,)], [(2, 3), (4, 3), (5,)],
    [(2, 3), (3,), ()], [(6, 5, 2, 3), (4, 3), (1, 1, 4)],
], ids=str)
def test_linear_errors(args):
    assert_same_error(lambda lib, *t: lib.nn.functional.linear(*t), args)


@pytest.mark.parametrize("args", [
    [(2, 3), (3, 4), (5, 3, 4), (5,)], [(2, 3), (2, 4), (5, 4, 4), (5,)],
    [(2, 3), (2, 4), (5, 3, 3), (5,)], [(2, 3), (2, 4), (5, 3, 4), (6,)],
    [(2, 3), (2, 4), (5, 3), (6,)], [(2, 3), (2, 2, 4), (5, 3, 4), (5,)],
], ids=str)
def test_bilinear_errors(args):
    assert_same_error(lambda lib, *t: lib.nn.functional.bilinear(*t), args)


@pytest.mark.parametrize("dims, shapes", [
    (-1, [(2, 3), (3, 4)]), (1, [(2, 3), (4, 4)]), (([0], [0, 1]), [(2, 3), (3, 4)]),
    (([-1], [0]), [(2, 3), (4, 4)]),
], ids=str)
def test_tensordot_errors(dims, shapes):
    assert_same_error(lambda lib, a, b: lib.tensordot(a, b, dims=dims), shapes)


def test_tensordot_dtype_error():
    assert_same_error(lambda lib, a, b: lib.tensordot(a, b, dims=1), [(2, 3), (3, 4)],
                      ["float32", "float64"])


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (4, 4)]), ("ij->ii", [(2, 3)]), ("ij->k", [(2, 3)]),
    ("i j->i", [(3,)]), ("ij,jk", [(2, 3)]), ("ij", [(2, 3), (3, 4)]), ("i.j", [(2, 3)]),
    ("...i...", [(2, 3)]), ("ij->i.", [(2, 3)]), ("ij->......", [(2, 3)]), ("i1", [(2, 3)]),
    ("ij->1", [(2, 3)]), ("ii->i", [(2, 3)]), ("...ij,...jk", [(2, 2, 3), (3, 3, 4)]),
    ("ij,jk->ik", [(2, 3), (3, 4, 1)]), ("ij,jk", [(2, 3), (3,)]),
], ids=str)
def test_einsum_errors(equation, shapes):
    assert_same_error(lambda lib, *t: lib.einsum(equation, *t), shapes)


def test_einsum_argument_errors():
    for args in [("ij",), ()]:
        errs = []
        for lib in (torch, retrograd):
            with pytest.raises(ValueError) as info:
                lib.einsum(*args)
            errs.append(str(info.value))
        assert errs[0] == errs[1]
    a = np.ones((2, 3), np.float32)
    errs = []
    for lib in (torch, retrograd):
        with pytest.raises(ValueError) as info:
            lib.einsum(_tensors(lib, [a])[0], [0, 99])
        errs.append(str(info.value))
    assert errs[0] == errs[1]


# --- dtypes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
@pytest.mark.parametrize("fn, shapes", [
    (lambda lib, a, b: lib.mm(a, b), [(2, 3), (3, 4)]),
    (lambda lib, a, b: lib.matmul(a, b), [(5, 2, 3), (3, 4)]),
    (lambda lib, a, b: lib.matmul(a, b), [(2, 2, 3), (2, 3, 4)]),
    (lambda lib, a, b: lib.bmm(a, b), [(2, 2, 3), (2, 3, 4)]),
    (lambda lib, a, b: lib.mv(a, b), [(2, 3), (3,)]),
    (lambda lib, a, b: lib.dot(a, b), [(3,), (3,)]),
    (lambda lib, a, b: lib.outer(a, b), [(3,), (2,)]),
    (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
    (lambda lib, a, b: lib.tensordot(a, b, dims=1), [(2, 3), (3, 4)]),
], ids=lambda v: str(v) if isinstance(v, list) else "")
def test_integer_products(fn, shapes, dtype):
    arrays = _arrays(shapes, dtype)
    ours = fn(retrograd, *_tensors(retrograd, arrays))
    theirs = fn(torch, *_tensors(torch, arrays))
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_products_keep_dtype(dtype):
    a = retrograd.ones(2, 3, dtype=getattr(retrograd, dtype))
    b = retrograd.ones(3, 4, dtype=getattr(retrograd, dtype))
    for out in (a @ b, retrograd.mm(a, b), retrograd.nn.functional.linear(a, b.t())):
        assert out.dtype == getattr(retrograd, dtype)
        np.testing.assert_array_equal(out.float().numpy(), np.full((2, 4), 3.0, np.float32))


def test_addmm_beta_zero_ignores_nan():
    for lib in (torch, retrograd):
        s = lib.full((2, 4), float("nan"))
        out = lib.addmm(s, lib.ones(2, 3), lib.ones(3, 4), beta=0, alpha=2)
        np.testing.assert_array_equal(out.numpy(), np.full((2, 4), 6.0, np.float32))


def test_matmul_operators():
    a, b = _arrays([(2, 3), (3, 4)])
    ra, rb = _tensors(retrograd, [a, b])
    np.testing.assert_allclose((ra @ rb).numpy(), a @ b, rtol=1e-6)
    np.testing.assert_allclose(rb.__rmatmul__(ra).numpy(), a @ b, rtol=1e-6)
    np.testing.assert_allclose(ra.matmul(rb).numpy(), a @ b, rtol=1e-6)


# --- graph structure ------------------------------------------------------------------------


def _chain(t, depth=4):
    names, fn = [], t.grad_fn
    while fn is not None and len(names) < depth:
        names.append(fn.name())
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return names


def _matmul(lib, a, b):
    return lib.matmul(a, b)


@pytest.mark.parametrize("fn, shapes, grads", [
    (_matmul, [(3,), (3, 4)], [True, True]),
    (_matmul, [(5, 2, 3), (3, 4)], [True, True]),
    (_matmul, [(5, 2, 3), (3,)], [True, True]),
    (_matmul, [(2, 3), (5, 3, 4)], [True, False]),
    (_matmul, [(1, 2, 3), (5, 3, 4)], [True, False]),
    (_matmul, [(5, 2, 3), (5, 3, 4)], [True, True]),
    (lambda lib, a, b: lib.nn.functional.linear(a, b), [(5, 2, 3), (4, 3)], [True, True]),
    (lambda lib, a, b, c: lib.nn.functional.linear(a, b, c), [(5, 2, 3), (4, 3), (4,)],
     [True, True, True]),
    (lambda lib, a, b, c: lib.nn.functional.linear(a, b, c), [(3,), (4, 3), (4,)],
     [True, True, True]),
], ids=lambda v: str(v) if isinstance(v, list) and isinstance(v[0], tuple) else "")
def test_grad_fn_chains(fn, shapes, grads):
    """The first two nodes of torch's decomposition are reproduced."""
    arrays = _arrays(shapes)
    outs = []
    for lib in (torch, retrograd):
        ts = _tensors(lib, arrays)
        for t, g in zip(ts, grads):
            t.requires_grad_(g)
        outs.append(_chain(fn(lib, *ts), 2))
    assert outs[0] == outs[1]


# --- second derivatives vs torch -------------------------------------------------------------


def _double_backward(lib, fn, arrays):
    ts = _tensors(lib, [a.astype(np.float64) for a in arrays], requires_grad=True)
    out = fn(lib, *ts)
    w = lib.from_numpy(np.cos(np.arange(out.numel(), dtype=np.float64)).reshape(out.shape))
    grads = lib.autograd.grad((out * w).sum(), ts, create_graph=True)
    total = sum((g * g).sum() for g in grads)
    second = lib.autograd.grad(total, ts, allow_unused=True)
    return [np.zeros(t.shape) if g is None else g.numpy() for g, t in zip(second, ts)]


@pytest.mark.parametrize("fn, shapes", [
    (lambda lib, a, b: lib.matmul(a, b), [(2, 2, 3), (3, 4)]),
    (lambda lib, a, b: lib.matmul(a, b), [(2, 1, 2, 3), (2, 3, 4)]),
    (lambda lib, a, b, c: lib.addmm(a, b, c, beta=0.5, alpha=2.0), [(4,), (2, 3), (3, 4)]),
    (lambda lib, a, b, c: lib.nn.functional.bilinear(a, b, c), [(2, 3), (2, 2), (4, 3, 2)]),
    (lambda lib, a, b: lib.einsum("bij,bjk->kib", a, b), [(2, 2, 3), (2, 3, 2)]),
    (lambda lib, a, b: lib.einsum("ij,j->i", a, b), [(2, 3), (1,)]),
    (lambda lib, a, b: lib.einsum("iij,jk->ik", a, b), [(3, 3, 2), (2, 2)]),
], ids=lambda v: str(v) if isinstance(v, list) else "")
def test_second_derivatives_match_torch(fn, shapes):
    arrays = _arrays(shapes)
    theirs = _double_backward(torch, fn, arrays)
    ours = _double_backward(retrograd, fn, arrays)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fn, shapes", [
    (lambda lib, s, a, b: s.addmm_(a, b), [(4,), (2, 3), (3, 4)]),
    (lambda lib, s, a, b: s.addmv_(a, b), [(1,), (2, 3), (3,)]),
    (lambda lib, s, a, b: s.baddbmm_(a, b), [(4,), (5, 2, 3), (5, 3, 4)]),
    (lambda lib, s, a, b: s.addmm_(a, b), [(2, 4), (2, 3), (4, 4)]),
], ids=lambda v: str(v) if isinstance(v, list) else "")
def test_inplace_shape_errors(fn, shapes):
    assert_same_error(fn, shapes, requires_grad=False)


def test_inplace_variants_match_torch():
    s, a, b = _arrays([(2, 4), (2, 3), (3, 4)])
    results = []
    for lib in (torch, retrograd):
        ts, ta, tb = _tensors(lib, [s, a, b], requires_grad=True)
        out = (ts * 1).addmm_(ta, tb, beta=0.5, alpha=2.0)
        assert out.grad_fn.name() == "AddmmBackward0"
        out.sum().backward()
        results.append([out.detach().numpy(), ts.grad.numpy(), ta.grad.numpy(),
                        tb.grad.numpy()])
    for o, t in zip(*results[::-1]):
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
