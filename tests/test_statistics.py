"""Scans, statistics and histograms against torch: ties, NaN, dtypes, edge cases and errors
(the generated op tests cover gradients and values on random inputs: op_samples/statistics.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd

NAN = float("nan")
INF = float("inf")


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return t.detach().numpy() if isinstance(t, retrograd.Tensor) else np.asarray(t)


def same(ours, theirs, equal_nan: bool = True, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    """Values, dtype and shape of a retrograd result equal torch's (tuples field by field)."""
    if isinstance(theirs, tuple):
        assert type(ours).__name__ == type(theirs).__name__
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b, equal_nan, rtol, atol)
        return
    assert str(ours.dtype).rpartition(".")[2] == str(theirs.dtype).rpartition(".")[2]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_np(ours).astype(np.float64), _np(theirs).astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=equal_nan)


def both(fn, *arrays, **kwargs):
    """fn(lib, *tensors) on retrograd and on torch."""
    ours = fn(retrograd, *[retrograd.tensor(a) for a in arrays], **kwargs)
    theirs = fn(torch, *[torch.tensor(a) for a in arrays], **kwargs)
    return ours, theirs


def same_error(fn, *arrays) -> None:
    """The same exception type and message on both."""
    with pytest.raises(Exception) as theirs:
        fn(torch, *[torch.tensor(a) for a in arrays])
    with pytest.raises(type(theirs.value)) as ours:
        fn(retrograd, *[retrograd.tensor(a) for a in arrays])
    assert str(ours.value) == str(theirs.value)


# --- cummax, cummin, logcumsumexp, cumsum_, cumprod_ --------------------------------------------

TIES = [
    [1.0, 3.0, 3.0, 2.0, NAN, 5.0, NAN, 0.0],
    [NAN, 1.0, NAN],
    [2.0, 2.0, 2.0],
    [-INF, INF, 1.0, INF],
]


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("values", TIES)
def test_cummax_ties_and_nan(name, values):
    ours, theirs = both(lambda lib, x: getattr(lib, name)(x, 0), np.array(values))
    same(ours, theirs)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_, np.float32])
def test_cummax_dtypes(name, dtype):
    a = np.array([[2, 1, 1, 2, 0, 3], [0, 0, 1, 1, 0, 0]]).astype(dtype)
    for dim in (0, 1, -1):
        ours, theirs = both(lambda lib, x, dim=dim: getattr(lib.Tensor, name)(x, dim), a)
        same(ours, theirs)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_gradient_goes_to_the_taken_element(name):
    a = np.array([[1.0, 3.0, 3.0, 2.0, 5.0], [4.0, 4.0, 1.0, 0.0, 4.0]])
    grads = []
    for lib in (retrograd, torch):
        x = lib.tensor(a, requires_grad=True)
        out = getattr(lib, name)(x, 1)
        out.values.backward(lib.tensor(np.arange(10.0).reshape(2, 5)))
        assert type(out.values.grad_fn).__name__ == name.title() + "Backward0"
        assert not out.indices.requires_grad
        grads.append(x.grad)
    same(*grads)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_errors_and_out_shapes(name):
    same_error(lambda lib, x: getattr(lib, name)(x, 2), np.zeros((2, 3)))
    ours, theirs = both(lambda lib, x: getattr(lib, name)(x, 1), np.zeros((0, 3)))
    same(ours, theirs)
    ours, theirs = both(lambda lib, x: getattr(lib, name)(x, -1), np.array(2.5))
    same(ours, theirs)


def test_logcumsumexp_is_stable():
    a = np.array([-INF, 1.0, INF, NAN, 2.0])
    same(*both(lambda lib, x: lib.logcumsumexp(x, 0), a))
    a = np.array([[1000.0, 1000.0, -1000.0], [-INF, -INF, -INF]])
    same(*both(lambda lib, x: lib.logcumsumexp(x, 1), a))
    same(*both(lambda lib, x: x.logcumsumexp(0), np.array([1.0, 2.0], np.float16)),
         rtol=1e-3)


def test_logcumsumexp_gradient_of_extreme_values():
    a = np.array([[-800.0, -790.0, -805.0], [700.0, 710.0, 705.0]])
    grads = []
    for lib in (retrograd, torch):
        x = lib.tensor(a, requires_grad=True)
        lib.logcumsumexp(x, 1).backward(lib.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]]))
        grads.append(x.grad)
    same(*grads)


def test_logcumsumexp_rejects_integers():
    same_error(lambda lib, x: lib.logcumsumexp(x, 0), np.array([1, 2]))


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumsum_inplace(name):
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    ours, theirs = both(lambda lib, x: getattr(x, name)(1), a)
    same(ours, theirs)
    x = retrograd.tensor(a)
    assert getattr(x, name)(0) is x
    same_error(lambda lib, x: getattr(x, name)(0, dtype=lib.float64), np.ones(2, np.float32))
    same_error(lambda lib, x: getattr(x, name)(0, dtype=lib.float32), np.ones(2, np.int64))
    same_error(lambda lib, x: getattr(x, name)(0), np.array([True, False]))
    same_error(lambda lib, x: getattr(x, name)(3), np.ones(2))
    same(*both(lambda lib, x: getattr(x, name)(0, dtype=lib.float32), np.ones(3, np.float32)))


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumsum_inplace_gradient(name):
    a = np.array([[0.5, -2.0, 3.0], [4.0, 0.0, 1.5]])
    grads = []
    for lib in (retrograd, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x * 1
        getattr(y, name)(1)
        assert type(y.grad_fn).__name__ == name[:-1].title() + "Backward0"
        y.backward(lib.ones_like(y))
        grads.append(x.grad)
    same(*grads)


# --- nanmean ------------------------------------------------------------------------------------


def test_nanmean_values_and_errors():
    a = np.array([[NAN, NAN, NAN], [1.0, NAN, 2.0]])
    same(*both(lambda lib, x: lib.nanmean(x, 1), a))
    same(*both(lambda lib, x: x.nanmean(), a))
    same(*both(lambda lib, x: lib.nanmean(x), np.zeros(0)))
    same(*both(lambda lib, x: lib.nanmean(x, dtype=lib.float64), a.astype(np.float32)))
    same_error(lambda lib, x: lib.nanmean(x), np.array([1, 2]))
    same_error(lambda lib, x: lib.nanmean(x), np.array([True]))
    out, theirs = retrograd.empty(2), torch.empty(2)
    assert retrograd.nanmean(retrograd.tensor(a), 1, out=out) is out
    same(out, torch.nanmean(torch.tensor(a), 1, out=theirs))
    same_error(lambda lib, x: lib.nanmean(x, 1, out=lib.empty(2, dtype=lib.int64)), a)


# --- quantile, nanquantile ----------------------------------------------------------------------

QUANTILE_ERRORS = {
    "q_range": lambda lib, x: lib.quantile(x, 1.5),
    "q_negative": lambda lib, x: lib.quantile(x, -0.1),
    "q_nan": lambda lib, x: lib.nanquantile(x, NAN),
    "q_whole": lambda lib, x: lib.quantile(x, 2),
    "q_tensor_range": lambda lib, x: lib.quantile(x, lib.tensor([0.5, 1.5])),
    "q_2d": lambda lib, x: lib.quantile(x, lib.tensor([[0.5]])),
    "q_dtype": lambda lib, x: lib.quantile(x, lib.tensor([0.5], dtype=lib.float64)),
    "int_input": lambda lib, x: lib.quantile(x.long(), 0.5),
    "half_input": lambda lib, x: lib.quantile(x.half(), 0.5),
    "interpolation": lambda lib, x: lib.quantile(x, 0.5, interpolation="foo"),
    "empty": lambda lib, x: lib.quantile(x[:0], 0.5, dim=1),
    "dim": lambda lib, x: lib.quantile(x, 0.5, dim=2),
}


@pytest.mark.parametrize("case", QUANTILE_ERRORS)
def test_quantile_errors(case):
    same_error(QUANTILE_ERRORS[case], np.arange(12.0, dtype=np.float32).reshape(3, 4))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_interpolations_ties_and_nan(name, interpolation):
    a = np.array([[1.0, 2.0, 2.0, NAN, 5.0, 0.5], [3.0, 3.0, 3.0, 3.0, 1.0, 8.0],
                  [NAN] * 6, [4.0, -1.0, 2.5, 2.5, 7.0, 0.0]], np.float32)
    qs = np.array([0.0, 0.125, 0.5, 0.5 + 1e-7, 0.75, 1.0], np.float32)
    for dim, keepdim in ((None, False), (None, True), (1, False), (0, True), (-1, True)):
        ours, theirs = both(lambda lib, x, q, dim=dim, keepdim=keepdim: getattr(lib, name)(
            x, q, dim, keepdim, interpolation=interpolation), a, qs)
        same(ours, theirs)
        ours, theirs = both(lambda lib, x, dim=dim, keepdim=keepdim: getattr(lib, name)(
            x, 0.4, dim, keepdim, interpolation=interpolation), a)
        same(ours, theirs)


def test_quantile_shapes_and_out():
    a = np.random.default_rng(0).normal(size=(2, 3, 4))
    for q in (0.3, np.array([]), np.array([0.1, 0.9])):
        for dim in (None, 0, 1, -1):
            for keepdim in (False, True):
                ours, theirs = both(lambda lib, x, q=q, dim=dim, keepdim=keepdim: lib.quantile(
                    x, q if isinstance(q, float) else lib.tensor(q), dim, keepdim), a)
                same(ours, theirs)
    same(*both(lambda lib, x: lib.quantile(x, lib.tensor([0.2, 0.5], dtype=lib.float64), 0,
                                           True), np.array(2.0)))
    x = retrograd.tensor(a)
    assert retrograd.quantile(x, 0.5, 1, out=retrograd.empty(0, dtype=x.dtype)).shape == (2, 4)
    out = retrograd.empty(3, dtype=x.dtype)
    assert retrograd.nanquantile(x[0], 0.5, 1, out=out) is out
    same(out, torch.nanquantile(torch.tensor(a[0]), 0.5, 1))
    same_error(lambda lib, x: lib.quantile(x, 0.5, 1, out=lib.empty(0)), a)
    with pytest.warns(UserWarning, match="resized"):
        retrograd.quantile(x, 0.5, 1, out=retrograd.empty(5, dtype=x.dtype))


def test_quantile_gradient_reaches_q_and_input():
    a = np.array([[0.3, -1.0, 2.0, 0.7], [1.5, 0.2, -0.4, 0.9]])
    grads = []
    for lib in (retrograd, torch):
        x = lib.tensor(a, requires_grad=True)
        q = lib.tensor([0.3, 0.8], dtype=lib.float64, requires_grad=True)
        lib.quantile(x, q, 1).sum().backward()
        grads.append((x.grad, q.grad))
    same(grads[0][0], grads[1][0])
    same(grads[0][1], grads[1][1])


# --- mode --------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 5, 16, 17, 40, 300])
def test_mode_ties_and_nan_match_torch(n):
    rng = np.random.default_rng(n)
    for trial in range(20):
        a = rng.integers(0, 4 if trial % 2 else n + 1, size=(3, n)).astype(np.float32)
        if trial % 3 == 0:
            a[rng.integers(0, 3, size=3), rng.integers(0, n, size=3)] = NAN
        same(*both(lambda lib, x: lib.mode(x), a))
        same(*both(lambda lib, x: x.mode(0, True), a))


def test_mode_dtypes_and_errors():
    for dtype in (np.int64, np.int32, np.uint8, np.bool_, np.float16, np.float64):
        a = np.array([[2, 1, 1, 2, 0, 3], [0, 0, 1, 1, 0, 0]]).astype(dtype)
        same(*both(lambda lib, x: lib.mode(x, 1), a))
    same(*both(lambda lib, x: lib.mode(x), np.array(3.0)))
    same(*both(lambda lib, x: lib.mode(x, 1, True), np.zeros((0, 3))))
    same_error(lambda lib, x: lib.mode(x), np.zeros(0))
    same_error(lambda lib, x: lib.mode(x, 1), np.zeros((2, 0)))
    same_error(lambda lib, x: lib.mode(x, 2), np.zeros((2, 3)))


def test_mode_gradient_goes_to_the_reported_index():
    a = np.array([[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0]])
    grads = []
    for lib in (retrograd, torch):
        x = lib.tensor(a, requires_grad=True)
        out = lib.mode(x, 1)
        assert type(out.values.grad_fn).__name__ == "ModeBackward0"
        out.values.backward(lib.tensor([2.0, 3.0], dtype=lib.float64))
        grads.append(x.grad)
    same(*grads)


# --- cov, corrcoef ------------------------------------------------------------------------------

COV_ERRORS = {
    "3d": lambda lib, x: lib.cov(x.reshape(2, 2, 2)),
    "bool": lambda lib, x: lib.cov(x > 0),
    "fweights_2d": lambda lib, x: lib.cov(x, fweights=lib.ones(1, 4, dtype=lib.int64)),
    "fweights_float": lambda lib, x: lib.cov(x, fweights=lib.ones(4)),
    "fweights_numel": lambda lib, x: lib.cov(x, fweights=lib.ones(3, dtype=lib.int64)),
    "fweights_negative": lambda lib, x: lib.cov(x, fweights=lib.tensor([1, -1, 1, 1])),
    "aweights_2d": lambda lib, x: lib.cov(x, aweights=lib.ones(1, 4)),
    "aweights_int": lambda lib, x: lib.cov(x, aweights=lib.ones(4, dtype=lib.int64)),
    "aweights_numel": lambda lib, x: lib.cov(x, aweights=lib.ones(3)),
    "aweights_negative": lambda lib, x: lib.cov(x, aweights=lib.tensor([1.0, -1, 1, 1])),
    "zero_weights": lambda lib, x: lib.cov(x, fweights=lib.zeros(4, dtype=lib.int64)),
    "corrcoef_3d": lambda lib, x: lib.corrcoef(x.reshape(2, 2, 2)),
}


@pytest.mark.parametrize("case", COV_ERRORS)
def test_cov_errors(case):
    same_error(COV_ERRORS[case], np.arange(8.0, dtype=np.float32).reshape(2, 4))


def test_cov_values():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 5)).astype(np.float32)
    fw = np.array([1, 2, 0, 3, 1])
    aw = rng.uniform(0.1, 2.0, size=5)
    for correction in (0, 1, 2, -1):
        same(*both(lambda lib, x, c=correction: lib.cov(x, correction=c), a), rtol=1e-5)
        same(*both(lambda lib, x, f, c=correction: lib.cov(x, correction=c, fweights=f),
                   a, fw),
             rtol=1e-5)
        same(*both(lambda lib, x, w, c=correction: lib.cov(x, correction=c, aweights=w),
                   a, aw),
             rtol=1e-5)
        same(*both(lambda lib, x, f, w, c=correction: x.cov(correction=c, fweights=f, aweights=w),
                   a, fw, aw), rtol=1e-5)
    same(*both(lambda lib, x: lib.cov(x), np.array([[1, 2, 4], [2, 2, 5]])))
    same(*both(lambda lib, x: lib.cov(x), np.array([1.0, 2.0, 4.0], np.float16)), rtol=1e-3)


@pytest.mark.parametrize("shape", [(), (3, 1), (2, 0)])
def test_cov_without_degrees_of_freedom_warns(shape):
    a = np.ones(shape)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        ours = retrograd.cov(retrograd.tensor(a))
    with pytest.warns(UserWarning):
        theirs = torch.cov(torch.tensor(a))
    same(ours, theirs)


def test_corrcoef_values():
    same(*both(lambda lib, x: lib.corrcoef(x), np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]])))
    same(*both(lambda lib, x: lib.corrcoef(x), np.array([[1, 2, 3], [2, 2, 5]])))
    same(*both(lambda lib, x: x.corrcoef(), np.array([1.0, 2.0, 4.0])))
    a = np.random.default_rng(4).normal(size=(4, 6))
    same(*both(lambda lib, x: lib.corrcoef(x), np.vstack([a, 3 * a[:1]])))


# --- bincount, histc, histogram -----------------------------------------------------------------

BINCOUNT_CASES = {
    "plain": lambda lib: lib.bincount(lib.tensor([0, 1, 1, 3, 5])),
    "minlength": lambda lib: lib.bincount(lib.tensor([0, 1, 1, 3, 5]), minlength=8),
    "float32_weights": lambda lib: lib.bincount(lib.tensor([0, 1, 1]), lib.tensor([1.0, 2, 3])),
    "float64_weights": lambda lib: lib.bincount(lib.tensor([0, 1, 1]),
                                                lib.tensor([1.0, 2, 3], dtype=lib.float64)),
    "int_weights": lambda lib: lib.bincount(lib.tensor([0, 1, 1]), lib.tensor([1, 2, 3])),
    "half_weights": lambda lib: lib.bincount(lib.tensor([0, 1, 1]),
                                             lib.tensor([1.0, 2, 3], dtype=lib.float16)),
    "empty": lambda lib: lib.bincount(lib.tensor([], dtype=lib.int64), minlength=3),
    "empty_weighted": lambda lib: lib.bincount(lib.tensor([], dtype=lib.int64), lib.tensor([])),
    "uint8": lambda lib: lib.bincount(lib.tensor([1, 2], dtype=lib.uint8)),
    "method": lambda lib: lib.tensor([2, 2, 0]).bincount(None, 4),
}


@pytest.mark.parametrize("case", BINCOUNT_CASES)
def test_bincount(case):
    same(BINCOUNT_CASES[case](retrograd), BINCOUNT_CASES[case](torch))


BINCOUNT_ERRORS = {
    "negative": lambda lib, x: lib.bincount(lib.tensor([1, -1])),
    "2d": lambda lib, x: lib.bincount(lib.tensor([[1]])),
    "0d": lambda lib, x: lib.bincount(lib.tensor(3)),
    "float": lambda lib, x: lib.bincount(lib.tensor([1.0])),
    "bool": lambda lib, x: lib.bincount(lib.tensor([True])),
    "weights_length": lambda lib, x: lib.bincount(lib.tensor([1, 2]), lib.tensor([1.0])),
    "minlength": lambda lib, x: lib.bincount(lib.tensor([1, 2]), minlength=-1),
    "backward": lambda lib, x: lib.bincount(
        lib.tensor([1, 2]), lib.ones(2, requires_grad=True)).sum().backward(),
}


@pytest.mark.parametrize("case", BINCOUNT_ERRORS)
def test_bincount_errors(case):
    same_error(BINCOUNT_ERRORS[case], np.zeros(1))


def test_bincount_node_is_not_implemented():
    w = retrograd.ones(2, requires_grad=True)
    assert retrograd.bincount(retrograd.tensor([1, 2]), w).grad_fn.name() == \
        "torch::autograd::NotImplemented"


def _with_nan(lib, x):
    return lib.where(x > 0, x, lib.tensor(NAN))


HIST_DATA = np.array([0.5, 1.0, 1.0, 3.0, 5.0, -1.0, 2.0, 0.0], np.float32)

HISTC_CASES = {
    "data_range": lambda lib, x: lib.histc(x, bins=4),
    "given_range": lambda lib, x: lib.histc(x, 4, 0, 3),
    "edges": lambda lib, x: lib.histc(x, 5, -1, 4),
    "one_value": lambda lib, x: lib.histc(x[1:3], bins=4),
    "empty": lambda lib, x: lib.histc(x[:0], bins=3),
    "float64": lambda lib, x: lib.histc(x.double(), bins=7),
    "half": lambda lib, x: lib.histc(x.half(), bins=3),
    "2d": lambda lib, x: x.reshape(2, 4).histc(3),
    "zero_dim": lambda lib, x: lib.histc(x[0], bins=2),
    "grad": lambda lib, x: lib.histc(x.requires_grad_(), bins=3),
}


@pytest.mark.parametrize("case", HISTC_CASES)
def test_histc(case):
    ours, theirs = both(HISTC_CASES[case], HIST_DATA)
    same(ours, theirs)
    assert not ours.requires_grad and not theirs.requires_grad


HISTC_ERRORS = {
    "int": lambda lib, x: lib.histc(x.long(), 3),
    "max_below_min": lambda lib, x: lib.histc(x, 3, 3, 1),
    "bins": lambda lib, x: lib.histc(x, 0),
    "nan_data": lambda lib, x: lib.histc(_with_nan(lib, x), 3),
    "inf_max": lambda lib, x: lib.histc(x, 3, 0, INF),
    "nan_min": lambda lib, x: lib.histc(x, 3, NAN, 1),
}


@pytest.mark.parametrize("case", HISTC_ERRORS)
def test_histc_errors(case):
    same_error(HISTC_ERRORS[case], HIST_DATA)


HISTOGRAM_CASES = {
    "count": lambda lib, x: lib.histogram(x, 4),
    "range": lambda lib, x: lib.histogram(x, 4, range=(0.0, 3.0)),
    "weight": lambda lib, x: lib.histogram(x, 3, weight=x.abs()),
    "density": lambda lib, x: lib.histogram(x, 3, density=True),
    "weight_density": lambda lib, x: lib.histogram(x, 3, weight=x.abs() + 1, density=True),
    "edges": lambda lib, x: lib.histogram(x, lib.tensor([-1.0, 0.0, 2.0, 10.0])),
    "edges_density": lambda lib, x: x.histogram(lib.tensor([-1.0, 0.0, 2.0, 10.0]),
                                                density=True),
    "unsorted_edges": lambda lib, x: lib.histogram(x, lib.tensor([3.0, 0.0, 2.0])),
    "one_value": lambda lib, x: lib.histogram(x[1:3], 3),
    "empty": lambda lib, x: lib.histogram(x[:0], 3),
    "empty_range": lambda lib, x: lib.histogram(x, 3, range=(1.0, 1.0)),
    "2d": lambda lib, x: lib.histogram(x.reshape(2, 4), 2, weight=x.reshape(4, 2).abs()),
    "float64": lambda lib, x: lib.histogram(x.double(), 6),
    "nan_with_edges": lambda lib, x: lib.histogram(_with_nan(lib, x), lib.tensor([0.0, 2.0])),
}


@pytest.mark.parametrize("case", HISTOGRAM_CASES)
def test_histogram(case):
    same(*both(HISTOGRAM_CASES[case], HIST_DATA))


HISTOGRAM_ERRORS = {
    "edges_dtype": lambda lib, x: lib.histogram(x, lib.tensor([0.0, 2.0], dtype=lib.float64)),
    "edges_2d": lambda lib, x: lib.histogram(x, lib.tensor([[0.0, 2.0]])),
    "one_edge": lambda lib, x: lib.histogram(x, lib.tensor([0.0])),
    "weight_dtype": lambda lib, x: lib.histogram(x, 3, weight=x.double()),
    "weight_numel": lambda lib, x: lib.histogram(x, 3, weight=x[:3].reshape(1, 3)),
    "int": lambda lib, x: lib.histogram(x.long(), 3),
    "int_edges": lambda lib, x: lib.histogram(x.long(), lib.tensor([1, 2])),
    "half": lambda lib, x: lib.histogram(x.half(), 3),
    "nan_data": lambda lib, x: lib.histogram(_with_nan(lib, x), 3),
    "range_order": lambda lib, x: lib.histogram(x, 3, range=(2.0, 1.0)),
    "range_length": lambda lib, x: lib.histogram(x, 3, range=(0.0, 1.0, 2.0)),
    "range_inf": lambda lib, x: lib.histogram(x, 3, range=(INF, 1.0)),
    "bins": lambda lib, x: lib.histogram(x, 0),
    "backward": lambda lib, x: lib.histogram(x.requires_grad_(), 3).hist.sum().backward(),
}


@pytest.mark.parametrize("case", HISTOGRAM_ERRORS)
def test_histogram_errors(case):
    same_error(HISTOGRAM_ERRORS[case], HIST_DATA)


def test_histogram_out_and_node():
    x = retrograd.tensor(HIST_DATA)
    hist, edges = retrograd.empty(3), retrograd.empty(4)
    result = retrograd.histogram(x, 3, out=(hist, edges))
    assert type(result).__name__ == "histogram_out" and result.hist is hist
    same(result, torch.histogram(torch.tensor(HIST_DATA), 3, out=(torch.empty(3),
                                                                  torch.empty(4))))
    out = retrograd.histogram(x.requires_grad_(), 3)
    assert out.hist.grad_fn.name() == "torch::autograd::NotImplemented"
    assert out.bin_edges.requires_grad


# --- cdist, dist, renorm ------------------------------------------------------------------------

_RNG = np.random.default_rng(11)
ROWS_A, ROWS_B = _RNG.normal(size=(3, 4)), _RNG.normal(size=(5, 4))
MANY_ROWS, BATCH = _RNG.normal(size=(30, 4)), _RNG.normal(size=(2, 3, 4))

CDIST_CASES = {
    "p2": lambda lib, a, b: lib.cdist(a, b),
    "p0": lambda lib, a, b: lib.cdist(a, b, 0),
    "p_half": lambda lib, a, b: lib.cdist(a, b, 0.5),
    "p_inf": lambda lib, a, b: lib.cdist(a, b, INF),
    "mm_mode": lambda lib, a, b: lib.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
    "same_rows": lambda lib, a, b: lib.cdist(a, a),
}


@pytest.mark.parametrize("case", CDIST_CASES)
def test_cdist_values_nodes_and_gradients(case):
    results = []
    for lib in (retrograd, torch):
        a = lib.tensor(ROWS_A, requires_grad=True)
        b = lib.tensor(ROWS_B, requires_grad=True)
        out = CDIST_CASES[case](lib, a, b)
        out.backward(lib.ones_like(out))
        results.append((out, type(out.grad_fn).__name__, a.grad, b.grad))
    (o1, n1, a1, b1), (o2, n2, a2, b2) = results
    same(o1, o2)
    assert n1 == n2
    same(a1, a2)
    assert (b1 is None) == (b2 is None)
    if b1 is not None:
        same(b1, b2)


def test_cdist_dispatch_and_shapes():
    for x1, x2 in ((MANY_ROWS, ROWS_B), (BATCH, MANY_ROWS), (BATCH, ROWS_B),
                   (BATCH[:1], BATCH.reshape(3, 2, 4)), (ROWS_A[:0], ROWS_B)):
        for mode in ("use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist"):
            ours, theirs = both(lambda lib, a, b, m=mode: lib.cdist(a, b, compute_mode=m), x1,
                                x2)
            same(ours, theirs, rtol=1e-5, atol=1e-6)
            x = retrograd.tensor(x1, requires_grad=True)
            y = torch.tensor(x1, requires_grad=True)
            assert (retrograd.cdist(x, retrograd.tensor(x2), compute_mode=mode).grad_fn.name()
                    == torch.cdist(y, torch.tensor(x2), compute_mode=mode).grad_fn.name())


CDIST_ERRORS = {
    "negative_p": lambda lib, a, b: lib.cdist(a, b, -1),
    "int": lambda lib, a, b: lib.cdist(a.long(), b.long()),
    "int_x2": lambda lib, a, b: lib.cdist(a, b.long()),
    "1d": lambda lib, a, b: lib.cdist(a[0], b),
    "columns": lambda lib, a, b: lib.cdist(a, b[:, :3]),
    "mode": lambda lib, a, b: lib.cdist(a, b, compute_mode="fast"),
    "dtypes": lambda lib, a, b: lib.cdist(a.float(), b),
    "batch": lambda lib, a, b: lib.cdist(a.expand(2, 3, 4), b.expand(3, 5, 4)),
}


@pytest.mark.parametrize("case", CDIST_ERRORS)
def test_cdist_errors(case):
    same_error(CDIST_ERRORS[case], ROWS_A, ROWS_B)


@pytest.mark.parametrize("p", [2, 1, 3, INF, -INF, 0.5])
def test_dist(p):
    results = []
    for lib in (retrograd, torch):
        a = lib.tensor(ROWS_A, requires_grad=True)
        b = lib.tensor(ROWS_A[1], dtype=lib.float32, requires_grad=True)
        out = a.dist(b, p)
        out.backward()
        assert type(out.grad_fn).__name__ == "DistBackward0"
        results.append((out, a.grad, b.grad))
    for ours, theirs in zip(*results):
        same(ours, theirs, rtol=1e-5)


def test_dist_errors():
    # the 0-"norm" has no gradient: torch's backward then fails on the undefined one
    same_error(lambda lib, a, b: lib.dist(a, b.requires_grad_(), 0).backward(), ROWS_A, ROWS_A)
    x = retrograd.tensor(ROWS_A, requires_grad=True)
    retrograd.dist(x, retrograd.tensor(ROWS_B[0]), 0).backward()
    assert x.grad is None
    same_error(lambda lib, a, b: lib.dist(a.long(), b.long()), ROWS_A, ROWS_A)
    same_error(lambda lib, a, b: lib.dist(a, b), ROWS_A, ROWS_B)


@pytest.mark.parametrize("p, dim, maxnorm", [(2, 0, 1.0), (1, 1, 0.5), (3, -1, 0.2),
                                             (INF, 0, 0.6), (2, 0, 0.0), (2, 1, 100.0)])
def test_renorm(p, dim, maxnorm):
    results = []
    for lib in (retrograd, torch):
        a = lib.tensor(ROWS_A, requires_grad=True)
        out = lib.renorm(a, p, dim, maxnorm)
        out.backward(lib.tensor(ROWS_B[:3]))
        assert type(out.grad_fn).__name__ == "RenormBackward0"
        b = a.detach().clone()
        assert b.renorm_(p, dim, maxnorm) is b
        results.append((out, a.grad, b))
    for ours, theirs in zip(*results):
        same(ours, theirs, rtol=1e-5)


def test_renorm_errors_and_dtypes():
    same(*both(lambda lib, a: a.half().renorm(2, 0, 1.0), ROWS_A), rtol=1e-3)
    same(*both(lambda lib, a: a.t().renorm(2, 0, 1.0), ROWS_A))
    same_error(lambda lib, a: lib.renorm(a, 0, 0, 1.0), ROWS_A)
    same_error(lambda lib, a: lib.renorm(a, 2, 0, -1.0), ROWS_A)
    same_error(lambda lib, a: lib.renorm(a[0], 2, 0, 1.0), ROWS_A)
    same_error(lambda lib, a: lib.renorm(a, 2, 2, 1.0), ROWS_A)
    same_error(lambda lib, a: lib.renorm(a.long(), 2, 0, 1.0), ROWS_A)
    same_error(lambda lib, a: a.long().renorm_(2, 0, 1.0), ROWS_A)


def test_cummax_out_gives_the_out_tuple():
    a = np.array([[1.0, 3.0, 2.0], [0.0, 5.0, -1.0]], np.float32)
    results = []
    for lib in (retrograd, torch):
        values, indices = lib.empty(2, 3), lib.empty(2, 3, dtype=lib.int64)
        out = lib.cummin(lib.tensor(a), 0, out=(values, indices))
        assert out.values is values and out.indices is indices
        results.append(out)
    same(*results)


FORWARD_AD_CASES = {
    "histc": lambda lib, x: lib.histc(x, 3),
    "histogram": lambda lib, x: lib.histogram(x, 3).hist,
    "histogram_edges": lambda lib, x: lib.histogram(x, lib.tensor([-1.0, 0.0, 1.0])).hist,
    "bincount": lambda lib, x: lib.bincount(lib.tensor([0, 1, 1, 2, 2, 0, 1, 2]), x),
    "mode": lambda lib, x: lib.mode(x).values,
    "cummax": lambda lib, x: lib.cummax(x, 0).values,
    "logcumsumexp": lambda lib, x: lib.logcumsumexp(x, 0),
    "quantile": lambda lib, x: lib.quantile(x, 0.3),
}


@pytest.mark.parametrize("case", FORWARD_AD_CASES)
def test_forward_ad_matches_torch(case):
    """A tangent through each op: torch's value, or torch's refusal."""
    fn = FORWARD_AD_CASES[case]
    x = np.array([0.5, -0.3, 0.9, 0.1, -0.8, 0.2, 0.4, -0.6], np.float32)
    try:
        theirs = torch.func.jvp(lambda t: fn(torch, t), (torch.tensor(x),),
                                (torch.ones(8),))[1]
    except NotImplementedError as error:
        with pytest.raises(NotImplementedError, match=str(error)):
            retrograd.func.jvp(lambda t: fn(retrograd, t), (retrograd.tensor(x),),
                               (retrograd.ones(8),))
        return
    ours = retrograd.func.jvp(lambda t: fn(retrograd, t), (retrograd.tensor(x),),
                              (retrograd.ones(8),))[1]
    same(ours, theirs, rtol=1e-5)


def test_std_sort_order_sorts():
    from retrograd._ops.kernels.std_sort import std_sort_order

    rng = np.random.default_rng(5)
    for n in (0, 1, 2, 16, 17, 100, 1000):
        values = rng.integers(0, 7, size=n).tolist()
        order = std_sort_order(values)
        assert sorted(order) == list(range(n))
        assert [values[i] for i in order] == sorted(values)


def test_std_sort_heapsort_fallback_sorts():
    from retrograd._ops.kernels import std_sort

    values = np.random.default_rng(6).integers(0, 50, size=300).tolist()
    keys, order = list(values), list(range(300))
    std_sort._heap_sort(keys, order, 0, 300)
    assert keys == sorted(values) and [values[i] for i in order] == keys
