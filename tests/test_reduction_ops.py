"""Reductions on their own (no torch needed): values, dtypes, errors and exact gradients."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import retrograd

inf = float("inf")


def t(values, dtype=retrograd.float64, requires_grad=False):
    return retrograd.tensor(values, dtype=dtype, requires_grad=requires_grad)


def grad_of(out, x):
    (g,) = retrograd.autograd.grad(out.sum(), x)
    return g.numpy()


def test_sum_of_int_and_bool_is_int64():
    x = t([[1, 2], [3, 4]], retrograd.int32)
    assert x.sum().dtype is retrograd.int64 and x.sum().item() == 10
    b = t([True, False, True], retrograd.bool)
    assert b.sum().dtype is retrograd.int64 and b.sum().item() == 2
    assert x.sum(1, dtype=retrograd.float32).dtype is retrograd.float32
    assert x.prod().dtype is retrograd.int64 and x.prod().item() == 24
    assert x.cumsum(0).dtype is retrograd.int64
    assert x.cumsum(0).tolist() == [[1, 2], [4, 6]]


def test_reductions_over_dims_keepdim_and_negative_dims():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    x = retrograd.from_numpy(a.copy())
    np.testing.assert_array_equal(x.sum((0, -1)).numpy(), a.sum((0, 2)))
    np.testing.assert_array_equal(x.sum([-1, 0], keepdim=True).numpy(),
                                  a.sum((0, 2), keepdims=True))
    np.testing.assert_array_equal(x.amax(-2).numpy(), a.max(1))
    np.testing.assert_array_equal(x.mean(()).numpy(), a.mean())
    np.testing.assert_allclose(x.var(1, keepdim=True).numpy(), a.var(1, ddof=1, keepdims=True))
    np.testing.assert_allclose(x.std(correction=0).numpy(), a.std())
    np.testing.assert_allclose(x.norm(dim=(1, 2)).numpy(), np.sqrt((a * a).sum((1, 2))))
    np.testing.assert_allclose(x.logsumexp(-1).numpy(), np.log(np.exp(a).sum(-1)))


def test_mean_of_int_raises_torchs_error():
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype. Input dtype "
                       r"must be either a floating point or complex dtype. Got: Int"):
        t([1, 2], retrograd.int32).mean()
    assert t([1, 2], retrograd.int32).mean(dtype=retrograd.float64).item() == 1.5


def test_dim_errors():
    x = t([[1.0, 2.0]])
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of "
                       r"\[-2, 1\], but got 2\)$"):
        x.sum(2)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        x.sum((1, -1))
    with pytest.raises(RuntimeError, match=r"^max\(\): Expected reduction dim to be specified for "
                       r"input.numel\(\) == 0. Specify the reduction dim with the 'dim' "
                       r"argument.$"):
        retrograd.ones(0).max()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero"):
        retrograd.ones(0, 3).max(-2)
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
        retrograd.ones(0).argmax()


def test_max_dim_result_is_a_named_pair():
    x = t([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    r = x.max(1)
    assert type(r).__name__ == "max"
    assert r.values.tolist() == [5.0, 7.0] and r.indices.tolist() == [1, 0]
    values, indices = r
    assert values is r[0] and indices is r[1]
    assert r.indices.dtype is retrograd.int64
    assert type(pickle.loads(pickle.dumps(r))) is type(r)
    assert x.min(dim=0, keepdim=True).indices.tolist() == [[0, 1, 0]]
    assert x.max().item() == 7.0


def test_extreme_ties_share_the_gradient():
    x = t([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
    np.testing.assert_allclose(grad_of(x.amax(1), x), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(grad_of(x.max(), x), [[0, 0.5, 0.5], [0, 0, 0]])
    # max.dim gives the whole gradient to the index it returns (the first)
    np.testing.assert_allclose(grad_of(x.max(1).values, x), [[0, 1, 0], [1, 0, 0]])


def test_prod_and_cumprod_gradients_are_exact_with_zeros():
    x = t([[2.0, 0.0, 3.0], [4.0, 5.0, 0.5]], requires_grad=True)
    np.testing.assert_array_equal(grad_of(x.prod(), x), [[0, 60, 0], [0, 0, 0]])
    np.testing.assert_array_equal(grad_of(x.prod(1), x), [[0, 6, 0], [2.5, 2, 20]])
    y = t([[2.0, 0.0, 3.0, 4.0]], requires_grad=True)
    # d/dy_k sum_j cumprod_j: only products up to the first zero survive
    np.testing.assert_array_equal(grad_of(y.cumprod(1), y), [[1, 2 + 6 + 24, 0, 0]])
    z = t([[0.0, 0.0, 3.0]], requires_grad=True)
    np.testing.assert_array_equal(grad_of(z.prod(), z), [[0, 0, 0]])


def test_double_backward_through_zero_products():
    x = t([[2.0, 0.0, 3.0]], requires_grad=True)
    (g,) = retrograd.autograd.grad(x.prod(), x, create_graph=True)
    (h,) = retrograd.autograd.grad((g * t([[0.0, 1.0, 0.0]])).sum(), x)
    # g_1 = x0 * x2, so d g_1 / dx = (x2, 0, x0)
    np.testing.assert_array_equal(h.numpy(), [[3, 0, 2]])


def test_norm_gradient_at_zero_is_zero():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the masked 0/0 entries must not warn
        for p in (2, 1, inf, 3, 1.5, 0.5):
            x = t([0.0, 0.0, 0.0], requires_grad=True)
            np.testing.assert_array_equal(grad_of(retrograd.norm(x, p), x), [0, 0, 0])
        x = t([1.0, 1.0], requires_grad=True)
        np.testing.assert_array_equal(grad_of(x.std(), x), [0, 0])


def test_softmax_is_stable_and_normalized():
    x = t([[1000.0, 999.0, -1000.0], [-1e4, -1e4, -1e4]], retrograd.float32)
    s = x.softmax(1).numpy()
    assert np.isfinite(s).all()
    np.testing.assert_allclose(s.sum(1), [1, 1], rtol=1e-6)
    ls = retrograd.nn.functional.log_softmax(x, dim=1).numpy()
    np.testing.assert_allclose(ls[1], np.log(1 / 3) * np.ones(3), rtol=1e-6)
    assert np.isfinite(x.logsumexp(1).numpy()).all()
    assert x.softmax(1, dtype=retrograd.float64).dtype is retrograd.float64


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = retrograd.nn.functional.softmax(t([[1.0, 2.0]]))
    np.testing.assert_allclose(out.numpy().sum(1), [1.0])


def test_var_with_too_few_degrees_of_freedom_warns_and_is_nan():
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        v = t([1.0]).var()
    assert np.isnan(v.item())


def test_all_any_count_nonzero():
    b = t([[True, False], [True, True]], retrograd.bool)
    assert b.all().item() is False and b.any().item() is True
    assert b.all(1).tolist() == [False, True] and b.all(()).shape == (2, 2)
    u = t([[1, 0], [2, 3]], retrograd.uint8)
    assert u.all(0).dtype is retrograd.uint8 and u.all(0).tolist() == [1, 0]
    assert retrograd.count_nonzero(u).item() == 3
    assert retrograd.count_nonzero(u, 0).tolist() == [2, 1]
    assert retrograd.count_nonzero(u, (0, 1)).dtype is retrograd.int64


def test_argmax_keepdim_and_median():
    x = t([[1.0, 9.0, 2.0], [7.0, 0.0, 3.0]])
    assert x.argmax().item() == 1
    assert x.argmax(keepdim=True).shape == (1, 1)
    assert x.argmin(1, keepdim=True).tolist() == [[0], [1]]
    assert x.median().item() == 2.0
    assert x.median(1).indices.tolist() == [2, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.nanmedian(0).values.tolist() == [1.0, 0.0, 2.0]


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_infinite_rows_is_nan_without_warnings(fn):
    # torch returns nan for a row of -inf (or one holding +inf) and warns about nothing
    torch = pytest.importorskip("torch")
    rows = [[-np.inf, -np.inf], [1.0, np.inf], [np.nan, 1.0], [1.0, 2.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = getattr(retrograd, fn)(retrograd.tensor(rows), 1).numpy()
    theirs = getattr(torch, fn)(torch.tensor(rows), 1).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True)
