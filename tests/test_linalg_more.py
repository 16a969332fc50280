"""torch.linalg beyond matmul / QR: errors, singular inputs, return types and edge cases, each
compared with torch (gradients and values of ordinary inputs are in tests/op_samples/
linalg_more.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
NOT_PD = [[1.0, 2.0], [2.0, 1.0]]


def _both(fn, *arrays, **kw):
    """fn(lib, *tensors) on retrograd and torch: (ours, theirs) results or exceptions."""
    out = []
    for lib in (retrograd, torch):
        ts = [lib.tensor(a) if not isinstance(a, (str, type(None))) else a for a in arrays]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(lib, *ts, **kw))
        except Exception as e:  # noqa: BLE001 - compared below
            out.append(e)
    return out


def _same_error(fn, *arrays, **kw) -> None:
    ours, theirs = _both(fn, *arrays, **kw)
    assert isinstance(theirs, Exception), f"torch did not raise: {theirs}"
    assert isinstance(ours, Exception), f"retrograd did not raise: {ours}"
    assert str(ours) == str(theirs)
    # torch.linalg.LinAlgError is a RuntimeError; the types line up
    for base in (IndexError, NotImplementedError, TypeError, RuntimeError):
        if isinstance(theirs, base):
            assert isinstance(ours, base), (type(ours), type(theirs))
            break


def _stack(*ms):
    return np.stack([np.asarray(m, dtype=np.float32) for m in ms])


EYE2 = np.eye(2, dtype=np.float32)
ERRORS = [
    ("inv int", lambda L, a: L.linalg.inv(a), [np.ones((2, 2), np.int64)]),
    ("inv half", lambda L, a: L.linalg.inv(a.half()), [EYE2]),
    ("inv 1d", lambda L, a: L.linalg.inv(a), [np.ones(2, np.float32)]),
    ("inv nonsquare", lambda L, a: L.linalg.inv(a), [np.ones((2, 3), np.float32)]),
    ("inv singular", lambda L, a: L.linalg.inv(a), [np.array(SINGULAR, np.float32)]),
    ("inv singular batch", lambda L, a: L.linalg.inv(a), [_stack(EYE2, EYE2, SINGULAR)]),
    ("inverse singular", lambda L, a: L.inverse(a), [np.array(SINGULAR, np.float32)]),
    ("inv_ex check", lambda L, a: L.linalg.inv_ex(a, check_errors=True),
     [_stack(EYE2, SINGULAR)]),
    ("det int", lambda L, a: L.linalg.det(a), [np.ones((2, 2), np.int64)]),
    ("det nonsquare", lambda L, a: L.det(a), [np.ones((2, 3), np.float32)]),
    ("slogdet 1d", lambda L, a: L.linalg.slogdet(a), [np.ones(3, np.float32)]),
    ("logdet int", lambda L, a: L.logdet(a), [np.ones((2, 2), np.int64)]),
    ("solve singular", lambda L, a, b: L.linalg.solve(a, b),
     [_stack(EYE2, SINGULAR), np.ones((2, 2), np.float32)]),
    ("solve_ex check", lambda L, a, b: L.linalg.solve_ex(a, b, check_errors=True),
     [_stack(EYE2, SINGULAR), np.ones((2, 2), np.float32)]),
    ("solve dtypes", lambda L, a, b: L.linalg.solve(a, b),
     [EYE2, np.ones(2, np.float64)]),
    ("solve vector shape", lambda L, a, b: L.linalg.solve(a, b),
     [EYE2, np.ones(3, np.float32)]),
    ("solve matrix shape", lambda L, a, b: L.linalg.solve(a, b),
     [EYE2, np.ones((3, 2), np.float32)]),
    ("solve right shape", lambda L, a, b: L.linalg.solve(a, b, left=False),
     [EYE2, np.ones((2, 3), np.float32)]),
    ("solve batches", lambda L, a, b: L.linalg.solve(a, b),
     [np.ones((3, 2, 2), np.float32), np.ones((4, 2, 1), np.float32)]),
    ("solve B 0-d", lambda L, a, b: L.linalg.solve(a, b), [EYE2, np.ones((), np.float32)]),
    ("cholesky not pd", lambda L, a: L.linalg.cholesky(a), [np.array(NOT_PD, np.float32)]),
    ("cholesky not pd batch", lambda L, a: L.linalg.cholesky(a), [_stack(EYE2, NOT_PD)]),
    ("cholesky_ex check", lambda L, a: L.linalg.cholesky_ex(a, check_errors=True),
     [np.array(NOT_PD, np.float32)]),
    ("torch.cholesky not pd", lambda L, a: L.cholesky(a), [np.array(NOT_PD, np.float32)]),
    ("cholesky int", lambda L, a: L.linalg.cholesky(a), [np.ones((2, 2), np.int64)]),
    ("eigh UPLO", lambda L, a: L.linalg.eigh(a, UPLO="X"), [EYE2]),
    ("eigh int", lambda L, a: L.linalg.eigh(a), [np.ones((2, 2), np.int64)]),
    ("eigvalsh nonsquare", lambda L, a: L.linalg.eigvalsh(a), [np.ones((2, 3), np.float32)]),
    ("svd 1d", lambda L, a: L.linalg.svd(a), [np.ones(2, np.float32)]),
    ("svd int", lambda L, a: L.linalg.svd(a), [np.ones((2, 2), np.int64)]),
    ("svd driver", lambda L, a: L.linalg.svd(a, driver="gesvd"), [EYE2]),
    ("pinv int", lambda L, a: L.linalg.pinv(a), [np.ones((2, 2), np.int64)]),
    ("matrix_power nonsquare", lambda L, a: L.linalg.matrix_power(a, 2),
     [np.ones((2, 3), np.float32)]),
    ("matrix_power int negative", lambda L, a: L.linalg.matrix_power(a, -2),
     [np.ones((2, 2), np.int64)]),
    ("cross length", lambda L, a, b: L.linalg.cross(a, b),
     [np.ones((2, 2), np.float32), np.ones((2, 2), np.float32)]),
    ("cross broadcast", lambda L, a, b: L.linalg.cross(a, b),
     [np.ones((4, 3), np.float32), np.ones((2, 3), np.float32)]),
    ("cross dtype", lambda L, a, b: L.linalg.cross(a, b),
     [np.ones(3, np.float32), np.ones(3, np.float64)]),
    ("multi_dot one", lambda L, a: L.linalg.multi_dot([a]), [EYE2]),
    ("multi_dot 3d", lambda L, a, b: L.linalg.multi_dot([a, b]),
     [EYE2, np.ones((2, 2, 2), np.float32)]),
    ("multi_dot shapes", lambda L, a, b: L.linalg.multi_dot([a, b]),
     [EYE2, np.ones((3, 2), np.float32)]),
    ("multi_dot dtypes", lambda L, a, b: L.linalg.multi_dot([a, b]),
     [EYE2, np.ones((2, 2), np.float64)]),
    ("matrix_norm ord", lambda L, a: L.linalg.matrix_norm(a, 3), [EYE2]),
    ("matrix_norm str ord", lambda L, a: L.linalg.matrix_norm(a, "abc"), [EYE2]),
    ("matrix_norm same dims", lambda L, a: L.linalg.matrix_norm(a, dim=(0, 0)), [EYE2]),
    ("matrix_norm one dim", lambda L, a: L.linalg.matrix_norm(a, dim=(0,)), [EYE2]),
    ("matrix_norm dim range", lambda L, a: L.linalg.matrix_norm(a, dim=(0, 5)), [EYE2]),
    ("matrix_norm int", lambda L, a: L.linalg.matrix_norm(a), [np.ones((2, 2), np.int64)]),
    ("norm 3d ord", lambda L, a: L.linalg.norm(a, "fro"), [np.ones((2, 2, 2), np.float32)]),
    ("norm nuc 1d", lambda L, a: L.linalg.norm(a, "nuc"), [np.ones(2, np.float32)]),
    ("cond nonsquare", lambda L, a: L.linalg.cond(a, 1), [np.ones((2, 3), np.float32)]),
    ("cond 1d", lambda L, a: L.linalg.cond(a), [np.ones(3, np.float32)]),
    ("cond order", lambda L, a: L.linalg.cond(a, 3), [EYE2]),
    ("vander N", lambda L, a: L.linalg.vander(a, N=1), [np.ones(3, np.float32)]),
    ("tensorinv shape", lambda L, a: L.linalg.tensorinv(a, ind=1),
     [np.ones((2, 3, 4), np.float32)]),
    ("tensorinv ind", lambda L, a: L.linalg.tensorinv(a, ind=0), [np.ones((2, 3), np.float32)]),
    ("matrix_rank 1d", lambda L, a: L.linalg.matrix_rank(a), [np.ones(3, np.float32)]),
    ("solve_triangular shape", lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
     [EYE2, np.ones((3, 2), np.float32)]),
    ("solve_triangular right shape",
     lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True, left=False),
     [EYE2, np.ones((3, 3), np.float32)]),
    ("solve_triangular no upper", lambda L, a, b: L.linalg.solve_triangular(a, b),
     [EYE2, EYE2]),
    ("lstsq rows", lambda L, a, b: L.linalg.lstsq(a, b),
     [np.ones((4, 3), np.float32), np.ones((3, 2), np.float32)]),
    ("lstsq dtypes", lambda L, a, b: L.linalg.lstsq(a, b),
     [np.ones((4, 3), np.float32), np.ones((4, 2), np.float64)]),
    ("lstsq driver", lambda L, a, b: L.linalg.lstsq(a, b, driver="foo"),
     [np.ones((4, 3), np.float32), np.ones((4, 2), np.float32)]),
    ("lstsq 1d", lambda L, a, b: L.linalg.lstsq(a, b),
     [np.ones(4, np.float32), np.ones((4, 2), np.float32)]),
    ("lstsq int", lambda L, a, b: L.linalg.lstsq(a, b),
     [np.ones((4, 3), np.int64), np.ones((4, 2), np.int64)]),
    ("lu_solve shapes", lambda L, a, p, b: L.linalg.lu_solve(a, p, b),
     [np.eye(3, dtype=np.float32), np.arange(1, 4, dtype=np.int32), np.ones((2, 2), np.float32)]),
    ("lu_solve nonsquare", lambda L, a, p, b: L.linalg.lu_solve(a, p, b),
     [np.ones((3, 2), np.float32), np.ones(2, np.int32), np.ones((3, 2), np.float32)]),
    ("lu_solve dtypes", lambda L, a, p, b: L.linalg.lu_solve(a, p, b),
     [np.eye(3, dtype=np.float32), np.arange(1, 4, dtype=np.int32), np.ones((3, 2))]),
    ("lu_factor int", lambda L, a: L.linalg.lu_factor(a), [np.ones((2, 2), np.int64)]),
    ("lu int", lambda L, a: L.linalg.lu(a), [np.ones((2, 2), np.int64)]),
    ("lu_factor 1d", lambda L, a: L.linalg.lu_factor(a), [np.ones(3, np.float32)]),
    ("lu_factor_ex 1d", lambda L, a: L.linalg.lu_factor_ex(a), [np.ones(3, np.float32)]),
    ("lu 1d", lambda L, a: L.linalg.lu(a), [np.ones(3, np.float32)]),
    ("lu_factor singular", lambda L, a: L.linalg.lu_factor(a), [_stack(EYE2, SINGULAR)]),
    ("lu_factor_ex check", lambda L, a: L.linalg.lu_factor_ex(a, check_errors=True),
     [np.array(SINGULAR, np.float32)]),
    ("matrix_exp nonsquare", lambda L, a: L.linalg.matrix_exp(a), [np.ones((2, 3), np.float32)]),
    ("matrix_exp int", lambda L, a: L.matrix_exp(a), [np.ones((2, 2), np.int64)]),
    ("matrix_exp 1d", lambda L, a: L.linalg.matrix_exp(a), [np.ones(2, np.float32)]),
    ("tensorsolve shapes", lambda L, a, b: L.linalg.tensorsolve(a, b),
     [np.ones((2, 3, 4), np.float32), np.ones((2, 3), np.float32)]),
    ("vecdot dtypes", lambda L, a, b: L.linalg.vecdot(a, b),
     [np.ones(3, np.float32), np.ones(3, np.float64)]),
    ("vecdot int", lambda L, a, b: L.linalg.vecdot(a, b),
     [np.ones(3, np.int64), np.ones(3, np.int64)]),
    ("cholesky_solve dtypes", lambda L, b, a: L.cholesky_solve(b, a),
     [np.ones((2, 2), np.float64), EYE2]),
    ("cholesky_solve 1d", lambda L, b, a: L.cholesky_solve(b, a), [np.ones(2, np.float32), EYE2]),
    ("cholesky_solve sizes", lambda L, b, a: L.cholesky_solve(b, a),
     [np.ones((3, 2), np.float32), EYE2]),
    ("cholesky_inverse 1d", lambda L, a: L.cholesky_inverse(a), [np.ones(3, np.float32)]),
    ("cholesky_inverse nonsquare", lambda L, a: L.cholesky_inverse(a),
     [np.ones((2, 3), np.float32)]),
    ("solve_triangular nonsquare",
     lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
     [np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)]),
]


@pytest.mark.parametrize("name, fn, arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn, arrays):
    _same_error(fn, *arrays)


def test_singular_inputs_raise_linalg_error():
    with pytest.raises(retrograd.linalg.LinAlgError):
        retrograd.linalg.inv(retrograd.tensor(SINGULAR))
    assert issubclass(retrograd.linalg.LinAlgError, RuntimeError)


def _values(x):
    if isinstance(x, tuple):
        return [_values(v) for v in x]
    return x.detach().numpy() if hasattr(x, "detach") else x


@pytest.mark.parametrize("name, fn", [
    ("inv_ex", lambda L, a: L.linalg.inv_ex(a).info),
    ("solve_ex", lambda L, a: L.linalg.solve_ex(a, L.ones(2, 2, 1)).info),
    ("cholesky_ex", lambda L, a: L.linalg.cholesky_ex(a).info),
    ("det", lambda L, a: L.linalg.det(a)),
    ("slogdet", lambda L, a: L.linalg.slogdet(a)),
    ("logdet", lambda L, a: L.logdet(a)),
    ("lu_factor_ex", lambda L, a: L.linalg.lu_factor_ex(a).info),
    ("matrix_rank", lambda L, a: L.linalg.matrix_rank(a)),
    ("cond", lambda L, a: L.linalg.cond(a, 1)),
])
def test_singular_and_indefinite_batches(name, fn):
    a = _stack(EYE2, SINGULAR if name != "cholesky_ex" else NOT_PD)
    ours, theirs = _both(fn, a)
    np.testing.assert_allclose(np.asarray(_values(ours), dtype=float),
                               np.asarray(_values(theirs), dtype=float), rtol=1e-5)
    if hasattr(theirs, "dtype"):
        assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")


@pytest.mark.parametrize("name, fn", [
    ("linalg.slogdet", lambda L, a: L.linalg.slogdet(a)),
    ("slogdet", lambda L, a: L.slogdet(a)),
    ("inv_ex", lambda L, a: L.linalg.inv_ex(a)),
    ("eigh", lambda L, a: L.linalg.eigh(a)),
    ("svd", lambda L, a: L.linalg.svd(a)),
    ("torch.svd", lambda L, a: L.svd(a)),
    ("lu", lambda L, a: L.linalg.lu(a)),
    ("lu_factor", lambda L, a: L.linalg.lu_factor(a)),
    ("lstsq", lambda L, a: L.linalg.lstsq(a, a)),
])
def test_named_tuples(name, fn):
    a = np.eye(3, dtype=np.float32) * 2
    ours, theirs = _both(fn, a)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours._fields if hasattr(ours, "_fields") else True
    for field in type(theirs)._fields if hasattr(type(theirs), "_fields") else ():
        getattr(ours, field)
    assert len(ours) == len(theirs)


@pytest.mark.parametrize("fn", [
    lambda L, a: L.linalg.inv(a), lambda L, a: L.linalg.det(a),
    lambda L, a: L.linalg.slogdet(a)[1], lambda L, a: L.linalg.svdvals(a),
    lambda L, a: L.linalg.eigvalsh(a), lambda L, a: L.linalg.cholesky(a),
    lambda L, a: L.linalg.pinv(a),
])
def test_empty_batches(fn):
    a = np.zeros((0, 3, 3), np.float32)
    ours, theirs = _both(fn, a)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")


def test_zero_by_zero_determinant():
    ours, theirs = _both(lambda L, a: (L.linalg.det(a), *L.linalg.slogdet(a)),
                         np.zeros((0, 0), np.float32))
    assert [float(o) for o in ours] == [float(t) for t in theirs]


def test_cond_of_one_norm_value():
    """torch's own backward of cond(A, 1) fails, so the sample compares no values."""
    a = np.array([[3.0, 1.0], [0.5, 2.0]], np.float64)
    for p in (1, -1, float("inf"), "fro", "nuc"):
        ours, theirs = _both(lambda L, x, p=p: L.linalg.cond(x, p), a)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
        assert ours.grad_fn is None


def test_norm_nuc_method_and_function():
    a = np.arange(6.0).reshape(2, 3)
    for fn in (lambda L, x: L.norm(x, "nuc"), lambda L, x: x.norm("nuc"),
               lambda L, x: L.norm(x, p="fro", dim=(0, 1)), lambda L, x: x.norm(3)):
        ours, theirs = _both(fn, a)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_inputs_unchanged_by_failed_calls():
    a = retrograd.tensor(SINGULAR)
    before = a.numpy().copy()
    with pytest.raises(RuntimeError):
        retrograd.linalg.inv(a)
    with pytest.raises(RuntimeError):
        retrograd.linalg.cholesky(a)
    np.testing.assert_array_equal(a.numpy(), before)


def test_torch_cross_default_dim_warns():
    a = np.arange(9.0).reshape(3, 3)
    with pytest.warns(UserWarning, match="without specifying the dim"):
        out = retrograd.cross(retrograd.tensor(a), retrograd.tensor(a[::-1].copy()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.cross(torch.tensor(a), torch.tensor(a[::-1].copy()))
    np.testing.assert_allclose(out.numpy(), want.numpy())


def test_torch_cholesky_warns_deprecation():
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        retrograd.cholesky(retrograd.eye(2))


def test_svd_compute_uv_false():
    a = np.array([[3.0, 1.0], [0.5, 2.0], [1.0, 1.0]])
    ours, theirs = _both(lambda L, x: L.svd(x, compute_uv=False), a)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-12)


def test_lstsq_drivers_fields():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        ours, theirs = _both(lambda L, x, y, d=driver: L.linalg.lstsq(x, y, driver=d), a, b)
        for o, t in zip(ours, theirs):
            assert tuple(o.shape) == tuple(t.shape), driver
            assert o.dtype.name == str(t.dtype).replace("torch.", "")
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


def test_matrix_rank_tolerances():
    a = np.diag([1.0, 1e-3, 1e-9])
    for kw in ({}, {"hermitian": True}, {"atol": 1e-2}, {"rtol": 1e-4}, {"atol": 0.0,
                                                                         "rtol": 0.0}):
        ours, theirs = _both(lambda L, x, kw=kw: L.linalg.matrix_rank(x, **kw), a)
        assert int(ours) == int(theirs), kw
        assert ours.dtype.name == "int64"


def test_matrix_power_of_integers():
    a = np.array([[1, 2], [3, 4]], np.int64)
    ours, theirs = _both(lambda L, x: L.linalg.matrix_power(x, 3), a)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.dtype.name == "int64"


def test_inv_double_backward_against_torch():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    grads = []
    for lib in (retrograd, torch):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(lib.linalg.inv(x).pow(2).sum(), [x], create_graph=True)
        (gg,) = lib.autograd.grad(g.sin().sum(), [x])
        grads.append(gg.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


def test_vmap_of_inverse_and_det_matches_loop():
    rng = np.random.default_rng(2)
    a = retrograd.tensor(rng.standard_normal((4, 3, 3)) + 3 * np.eye(3))
    got = retrograd.func.vmap(lambda m: retrograd.linalg.inv(m) * retrograd.linalg.det(m))(a)
    want = retrograd.stack([retrograd.linalg.inv(m) * retrograd.linalg.det(m) for m in a])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("create_graph", [False, True])
def test_det_gradient_of_singular_matrices(create_graph):
    """torch: zero without create_graph, the adjugate (via the SVD) with it; and the double
    backward of the adjugate path. The singular matrices are singular in any arithmetic (a
    zero row, a zero matrix): where only rounding makes LU meet a zero pivot (a row twice
    another), torch's det comes out exactly zero on some machines' LAPACK and about 1e-16 on
    others, and its first-order gradient with it (zero, or det * A^-T)."""
    a = np.stack([np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]]),
                  np.diag([2.0, 2.0, 2.0]), np.zeros((3, 3)),
                  np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0], [0.0, 1.0, 5.0]])])
    out = []
    for lib in (retrograd, torch):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(lib.linalg.det(x).sum(), [x], create_graph=create_graph)
        row = [g.detach().numpy()]
        if create_graph:
            (gg,) = lib.autograd.grad((g * g).sum(), [x])
            row.append(gg.numpy())
        out.append(row)
    for ours, theirs in zip(*out):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9, equal_nan=True)


def test_vecdot_in_low_precision_and_with_out():
    def run(lib):
        found = []
        for dtype in ("float16", "bfloat16", "float32", "float64"):
            a = lib.arange(6.0).reshape(2, 3).to(getattr(lib, dtype))
            found.append((lib.linalg.vecdot(a, a).float().tolist(), str(a.dtype)[-8:]))
        out = lib.empty(())
        res = lib.linalg.vecdot(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), out=out)
        found.append((res is out, out.item(), out._version > 0 if lib is retrograd else True))
        for bad in (lambda: lib.linalg.vecdot(lib.ones(3), lib.ones(3),
                                              out=lib.empty((), dtype=lib.float64)),
                    lambda: lib.linalg.vecdot(lib.ones(3, requires_grad=True), lib.ones(3),
                                              out=lib.empty(())),
                    lambda: lib.linalg.vecdot(lib.ones(3), lib.ones(3), out=3)):
            with pytest.raises((RuntimeError, TypeError)) as err:
                bad()
            found.append((err.type.__name__, str(err.value)))
        return found

    assert run(retrograd) == run(torch)
