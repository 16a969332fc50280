"""Reductions against torch where op samples can't say it: errors, dtypes, ties, zeros, layouts."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

nan, inf = float("nan"), float("inf")
RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
XI = np.arange(12, dtype=np.int32).reshape(3, 4)
XB = XI % 3 == 0
XU = (XI % 2).astype(np.uint8)
EMPTY = np.ones((0, 3), np.float32)
SCALAR = np.array(2.5, np.float32)
XT = RNG.standard_normal((4, 3)).astype(np.float32).T
X3T = RNG.standard_normal((4, 3, 2)).astype(np.float32).transpose(2, 1, 0)


def tensor(lib, a: np.ndarray, requires_grad: bool = False):
    t = (torch.from_numpy if lib is torch else retrograd.from_numpy)(np.array(a, copy=True,
                                                                              order="K"))
    return t.requires_grad_(True) if requires_grad else t


def outcome(lib, fn, a):
    """What fn does on lib: ('ok', tuple type name, [(dtype, shape, strides, values)]) or the
    exception's type and first message line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib, tensor(lib, a))
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e).split("\n")[0]
    outs = out if isinstance(out, tuple) else (out,)
    kind = type(out).__name__ if isinstance(out, tuple) else ""
    return "ok", kind, [(str(t.dtype).split(".")[-1], tuple(t.shape), t.stride(),
                         t.detach().numpy().astype(np.float64)) for t in outs]


def assert_same(fn, a) -> None:
    theirs, ours = outcome(torch, fn, a), outcome(retrograd, fn, a)
    assert ours[:2] == theirs[:2]
    if theirs[0] != "ok":
        return
    assert len(ours[2]) == len(theirs[2])
    for (od, os, ost, ov), (td, ts, tst, tv) in zip(ours[2], theirs[2]):
        assert (od, os, ost) == (td, ts, tst)
        np.testing.assert_allclose(ov, tv, rtol=1e-5, atol=1e-6, equal_nan=True)


CASES = {
    # dims
    "dim_out_of_range": (lambda L, x: x.sum(2), X),
    "dim_out_of_range_zero_dim": (lambda L, s: s.sum(1), SCALAR),
    "duplicate_dims": (lambda L, x: x.sum((1, -1)), X),
    "duplicate_dims_zero_dim": (lambda L, s: s.sum((0, 0)), SCALAR),
    "empty_dim_list": (lambda L, x: x.sum([]), X),
    "none_keepdim": (lambda L, x: x.sum(None, True), X),
    "zero_dim_dim": (lambda L, s: s.mean(-1, keepdim=True), SCALAR),
    "max_dim_out_of_range": (lambda L, x: x.max(5), X),
    "cumsum_dim_out_of_range": (lambda L, x: x.cumsum(3), X),
    "softmax_dim_out_of_range": (lambda L, x: x.softmax(2), X),
    # sum / mean / prod dtypes
    "sum_int": (lambda L, x: x.sum(), XI),
    "sum_bool": (lambda L, x: x.sum(0), XB),
    "sum_uint8_dtype": (lambda L, x: x.sum(dtype=L.uint8), XU),
    "sum_float_to_int": (lambda L, x: x.sum(dtype=L.int32), X),
    "sum_dtype": (lambda L, x: x.sum(1, dtype=L.float64), X),
    "mean_int": (lambda L, x: x.mean(), XI),
    "mean_bool": (lambda L, x: x.mean(), XB),
    "mean_int_dtype": (lambda L, x: x.mean(dtype=L.float64), XI),
    "mean_int_dtype_long": (lambda L, x: x.mean(dtype=L.int64), XI),
    "mean_empty": (lambda L, e: e.mean(0), EMPTY),
    "nansum_int": (lambda L, x: x.nansum(), XI),
    "nansum_int_dtype": (lambda L, x: x.nansum(dtype=L.float32), XI),
    "prod_int": (lambda L, x: x.prod(1), XI),
    "prod_uint8": (lambda L, x: x.prod(), XU),
    "prod_bool": (lambda L, x: x.prod(1), XB),
    "prod_empty": (lambda L, e: e.prod(0), EMPTY),
    # extremes
    "max_empty": (lambda L, e: e.max(), EMPTY),
    "min_empty": (lambda L, e: e.min(), EMPTY),
    "amax_empty": (lambda L, e: e.amax(), EMPTY),
    "amin_empty_dim": (lambda L, e: e.amin(0), EMPTY),
    "amax_empty_other_dim": (lambda L, e: e.amax(1), EMPTY),
    "max_empty_dim": (lambda L, e: e.max(-2), EMPTY),
    "max_empty_other_dim": (lambda L, e: e.max(1), EMPTY),
    "argmax_empty": (lambda L, e: e.argmax(), EMPTY),
    "argmin_empty_dim": (lambda L, e: e.argmin(0), EMPTY),
    "argmax_bool": (lambda L, x: x.argmax(), XB),
    "argmin_bool": (lambda L, x: x.argmin(1), XB),
    "max_bool": (lambda L, x: x.max(), XB),
    "max_bool_dim": (lambda L, x: x.max(1), XB),
    "amax_int": (lambda L, x: x.amax(0), XI),
    "argmax_keepdim": (lambda L, x: x.argmax(keepdim=True), X),
    "argmax_zero_dim": (lambda L, s: s.argmax(0, True), SCALAR),
    "max_zero_dim": (lambda L, s: s.max(0), SCALAR),
    "aminmax": (lambda L, x: L.aminmax(x), X),
    "aminmax_dim": (lambda L, x: L.aminmax(x, dim=0, keepdim=True), X),
    "aminmax_empty": (lambda L, e: L.aminmax(e), EMPTY),
    "aminmax_empty_dim": (lambda L, e: L.aminmax(e, dim=0), EMPTY),
    "median_int": (lambda L, x: x.median(1), XI),
    "median_empty": (lambda L, e: e.median(), EMPTY),
    "median_empty_dim": (lambda L, e: e.median(0), EMPTY),
    "median_empty_other_dim": (lambda L, e: e.median(1), EMPTY),
    # var / std
    "var_int": (lambda L, x: x.var(), XI),
    "std_int": (lambda L, x: x.std(), XI),
    "var_mean_int": (lambda L, x: L.var_mean(x), XI),
    "std_mean_int": (lambda L, x: L.std_mean(x), XI),
    "var_zero_dim": (lambda L, s: s.var(), SCALAR),
    "var_empty": (lambda L, e: e.var(0), EMPTY),
    "var_positional": (lambda L, x: x.var(1, False, True), X),
    "var_unbiased_only": (lambda L, x: x.var(False), X),
    "var_empty_dims": (lambda L, x: x.var(()), X),
    "var_mean_keepdim": (lambda L, x: L.var_mean(x, 1, keepdim=True), X),
    "std_mean_correction": (lambda L, x: L.std_mean(x, correction=0), X),
    "std_correction_float": (lambda L, x: x.std(0, correction=1.5), X),
    # norms
    "norm_int": (lambda L, x: x.norm(), XI),
    "norm_narrowing": (lambda L, x: L.norm(x.double(), dtype=L.float32), X),
    "norm_dtype": (lambda L, x: L.norm(x, dtype=L.float64), X),
    "norm_inf_empty": (lambda L, e: e.norm(inf), EMPTY),
    "norm_inf_empty_other_dim": (lambda L, e: e.norm(inf, dim=1), EMPTY),
    "norm_negative_empty": (lambda L, e: L.norm(e, -1), EMPTY),
    "norm_negative_float_empty": (lambda L, e: L.norm(e, -1.5), EMPTY),
    "norm_empty": (lambda L, e: e.norm(), EMPTY),
    "norm_bad_order": (lambda L, x: L.norm(x, "abc"), X),
    "norm_fro_three_dims": (lambda L, x: L.norm(x.reshape(2, 2, 3), "fro", dim=(0, 1, 2)), X),
    "norm_p0": (lambda L, x: L.norm(x, 0), X),
    "norm_fro_dim": (lambda L, x: L.norm(x, "fro", dim=1), X),
    # logsumexp, cumulative, softmax
    "logsumexp_int": (lambda L, x: x.logsumexp(1), XI),
    "logsumexp_bool": (lambda L, x: x.logsumexp(0), XB),
    "logsumexp_empty": (lambda L, e: e.logsumexp(0), EMPTY),
    "logsumexp_zero_dim": (lambda L, s: s.logsumexp(0), SCALAR),
    "cumsum_int": (lambda L, x: x.cumsum(0), XI),
    "cumsum_bool": (lambda L, x: x.cumsum(1), XB),
    "cumprod_uint8": (lambda L, x: x.cumprod(1), XU),
    "cumsum_dtype": (lambda L, x: x.cumsum(1, dtype=L.float32), XI),
    "cumsum_zero_dim": (lambda L, s: s.cumsum(0), SCALAR),
    "cumsum_zero_dim_err": (lambda L, s: s.cumsum(1), SCALAR),
    "softmax_int_dim0": (lambda L, x: x.softmax(0), XI),
    "softmax_int_lastdim": (lambda L, x: x.softmax(1), XI),
    "log_softmax_int": (lambda L, x: x.log_softmax(-1), XI),
    "log_softmax_int_dim0": (lambda L, x: x.log_softmax(0), XI),
    "softmax_int_dtype": (lambda L, x: x.softmax(1, dtype=L.float64), XI),
    "softmax_zero_dim": (lambda L, s: s.softmax(0), SCALAR),
    "softmax_empty": (lambda L, e: e.softmax(0), EMPTY),
    # all / any / count_nonzero
    "all_uint8": (lambda L, x: x.all(), XU),
    "all_uint8_dim": (lambda L, x: x.all(1), XU),
    "any_uint8_keepdim": (lambda L, x: x.any(1, keepdim=True), XU),
    "all_int": (lambda L, x: x.all(), XI),
    "all_float_dim": (lambda L, x: x.all(0), X),
    "all_empty_dim_list": (lambda L, x: x.all(()), X),
    "all_keepdim": (lambda L, x: x.all(keepdim=True), X),
    "all_zero_dim": (lambda L, s: s.all(0), SCALAR),
    "any_empty": (lambda L, e: e.any(), EMPTY),
    "all_empty_dim": (lambda L, e: e.all(1), EMPTY),
    "any_dims": (lambda L, x: x.any((0, 1)), X),
    "count_nonzero": (lambda L, x: L.count_nonzero(x), XI),
    "count_nonzero_dim": (lambda L, x: L.count_nonzero(x, -1), XI),
    "count_nonzero_dims": (lambda L, x: L.count_nonzero(x, (0, 1)), XB),
    "count_nonzero_empty_dims": (lambda L, x: L.count_nonzero(x, ()), XI),
    "count_nonzero_method": (lambda L, x: x.count_nonzero(0), XI),
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_matches_torch(case):
    fn, a = CASES[case]
    assert_same(fn, a)


LAYOUT_CALLS = {
    "sum_keepdim": lambda L, a: a.sum(1, keepdim=True),
    "sum_first_keepdim": lambda L, a: a.sum(0, keepdim=True),
    "sum": lambda L, a: a.sum(0),
    "mean": lambda L, a: a.mean(-1, keepdim=True),
    "prod": lambda L, a: a.prod(0, keepdim=True),
    "nansum": lambda L, a: a.nansum(0, keepdim=True),
    "amax": lambda L, a: a.amax(1, keepdim=True),
    "max_dim": lambda L, a: a.max(0, keepdim=True),
    "max_dim_nokeep": lambda L, a: a.max(1),
    "argmax": lambda L, a: a.argmax(0, keepdim=True),
    "median": lambda L, a: a.median(1, keepdim=True),
    "var": lambda L, a: a.var(0, keepdim=True),
    "std": lambda L, a: a.std(1),
    "var_mean": lambda L, a: L.var_mean(a, 1),
    "norm": lambda L, a: a.norm(dim=0, keepdim=True),
    "norm3": lambda L, a: a.norm(3, dim=1),
    "norm_inf": lambda L, a: a.norm(inf, dim=0),
    "logsumexp": lambda L, a: a.logsumexp(0, keepdim=True),
    "cumsum": lambda L, a: a.cumsum(0),
    "cumprod": lambda L, a: a.cumprod(1),
    "softmax": lambda L, a: a.softmax(0),
    "log_softmax": lambda L, a: a.log_softmax(1),
    "count_nonzero": lambda L, a: L.count_nonzero(a, 1),
}


@pytest.mark.parametrize("call", LAYOUT_CALLS, ids=str)
@pytest.mark.parametrize("a", [XT, X3T], ids=["transposed", "permuted3d"])
def test_noncontiguous_layout_matches_torch(call, a):
    """torch's reduction outputs are row-major whatever the input layout; so are ours."""
    assert_same(LAYOUT_CALLS[call], a)


# --- gradients: ties, zeros, special values --------------------------------------------------


def grads(lib, fn, a, order2: bool = False):
    x = tensor(lib, np.asarray(a, np.float64), True)
    out = fn(lib, x)
    out = out[0] if isinstance(out, tuple) else out
    w = tensor(lib, np.random.default_rng(3).standard_normal(tuple(out.shape)))
    (g,) = lib.autograd.grad((out * w).sum(), x, create_graph=order2)
    if not order2:
        return g.numpy(), None
    (g2,) = lib.autograd.grad((g * g).sum(), x, allow_unused=True)
    g2 = None if g2 is None else np.asarray(g2.detach().numpy(force=True)
                                            if lib is torch else g2.detach().numpy())
    return g.detach().numpy(), g2


def assert_same_grads(fn, a, order2: bool = False) -> None:
    (g1, g2), (t1, t2) = grads(retrograd, fn, a, order2), grads(torch, fn, a, order2)
    np.testing.assert_allclose(g1, t1, rtol=1e-10, atol=1e-12, equal_nan=True)
    if order2:
        assert (g2 is None) == (t2 is None)
        if t2 is not None:
            np.testing.assert_allclose(g2, t2, rtol=1e-10, atol=1e-12, equal_nan=True)


TIES = np.array([[1.0, 3, 3], [2, 2, 2]])

GRAD_CASES = {
    "amax_ties": (lambda L, x: x.amax(1), TIES),
    "amin_ties_all": (lambda L, x: x.amin(), TIES),
    "max_ties": (lambda L, x: x.max(), TIES),
    "max_dim_ties": (lambda L, x: x.max(1), TIES),
    "min_dim_ties": (lambda L, x: x.min(1), np.array([[1.0, 3, 1], [2, 2, 2]])),
    "aminmax_ties": (lambda L, x: L.aminmax(x, dim=1)[1], TIES),
    "median_ties": (lambda L, x: x.median(1), np.array([[1.0, 3, 3, 2], [2, 2, 2, 2],
                                                       [5, 1, 5, 1]])),
    "median_ties_full": (lambda L, x: x.median(), np.array([[1.0, 2, 2], [2, 3, 0]])),
    "max_nan": (lambda L, x: x.max(), np.array([[1.0, nan, 3], [2, nan, 2]])),
    "amax_nan": (lambda L, x: x.amax(1), np.array([[1.0, nan, 3], [2, 2, 2]])),
    "max_dim_nan": (lambda L, x: x.max(1), np.array([[1.0, nan, 3, nan]])),
    "median_nan": (lambda L, x: x.median(1), np.array([[1.0, nan, 3, 2], [1, 2, nan, nan]])),
    "nanmedian_nan": (lambda L, x: x.nanmedian(1), np.array([[1.0, nan, 3, 2], [1, 2, nan, 0]])),
    "norm_inf_ties": (lambda L, x: L.norm(x, inf), np.array([[-2.0, 2, 1]])),
    "norm_neg_inf_ties": (lambda L, x: L.norm(x, -inf), np.array([[-2.0, 2, 1, -1]])),
    "std_of_constant": (lambda L, x: x.std(), np.array([[1.0, 1]])),
    "var_no_dof": (lambda L, x: x.var(correction=2), np.array([[1.0, 2]])),
    "var_no_dof_constant": (lambda L, x: x.var(correction=2), np.array([[1.0, 1]])),
    "var_no_dof_three": (lambda L, x: x.var(correction=3), np.array([1.0, 2, 4])),
    "var_dim_correction_above_n": (lambda L, x: x.var(1, correction=5), np.array([[1.0, 2, 4]])),
    "var_dim_correction_n": (lambda L, x: x.var(1, correction=3), np.array([[1.0, 2, 4]])),
    "logsumexp_inf": (lambda L, x: x.logsumexp(1), np.array([[-inf, -inf], [inf, 1], [nan, 1]])),
    "softmax_neg_inf": (lambda L, x: x.softmax(1), np.array([[-inf, -inf], [-inf, 1]])),
    "log_softmax_neg_inf": (lambda L, x: x.log_softmax(1), np.array([[-inf, 0], [-inf, 1]])),
    "softmax_large": (lambda L, x: x.softmax(1), np.array([[1000.0, 0], [-1000, 1]])),
    "logsumexp_large": (lambda L, x: x.logsumexp(1), np.array([[1000.0, 0], [-1000, 1]])),
    "nansum_nan": (lambda L, x: x.nansum(1), np.array([[1.0, nan, 3], [nan, nan, 2]])),
}


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_gradient_matches_torch(case):
    fn, a = GRAD_CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_grads(fn, a)


def mix(pair):
    """Both outputs of var_mean / std_mean in one differentiable value."""
    spread, mean = pair
    return spread * 3 + mean * mean


ZEROS = np.array([[1.0, 0, 3, 4], [0, 2, 0, 5], [1, 2, 3, 4]])

SECOND_ORDER = {
    "prod_one_zero": (lambda L, x: x.prod(), np.array([[1.0, 0, 3], [2, 4, 5]])),
    "prod_two_zeros": (lambda L, x: x.prod(), np.array([[1.0, 0, 3], [2, 0, 5]])),
    "prod_dim_zeros": (lambda L, x: x.prod(1), ZEROS),
    "prod_dim_zeros_keepdim": (lambda L, x: x.prod(0, keepdim=True), ZEROS),
    "cumprod_zeros": (lambda L, x: x.cumprod(1), ZEROS),
    "cumprod_zeros_dim0": (lambda L, x: x.cumprod(0), ZEROS),
    "cumprod_no_zero": (lambda L, x: x.cumprod(1), ZEROS + 1),
    "var": (lambda L, x: x.var(1), ZEROS + 0.5),
    "std": (lambda L, x: x.std(), ZEROS + 0.5),
    "var_mean": (lambda L, x: mix(L.var_mean(x, 1)), ZEROS),
    "std_mean": (lambda L, x: mix(L.std_mean(x, 0)), ZEROS),
    "softmax": (lambda L, x: x.softmax(0), ZEROS),
    "log_softmax": (lambda L, x: x.log_softmax(1), ZEROS),
    "logsumexp": (lambda L, x: x.logsumexp(0), ZEROS),
}


@pytest.mark.parametrize("case", SECOND_ORDER, ids=str)
def test_second_order_matches_torch(case):
    fn, a = SECOND_ORDER[case]
    assert_same_grads(fn, a, order2=True)


GRAPH_CALLS = {
    "max": lambda L, x: x.max(), "max_dim": lambda L, x: x.max(0)[0],
    "amax": lambda L, x: x.amax(0), "median": lambda L, x: x.median(),
    "nansum": lambda L, x: x.nansum(), "cumsum": lambda L, x: x.cumsum(0),
    "mean": lambda L, x: x.mean(1), "prod": lambda L, x: x.prod(1),
    "var": lambda L, x: x.var(), "norm1": lambda L, x: L.norm(x, 1),
    "norm_inf": lambda L, x: L.norm(x, inf), "norm2": lambda L, x: L.norm(x),
    "softmax": lambda L, x: x.softmax(1), "log_softmax": lambda L, x: x.log_softmax(1),
    "logsumexp": lambda L, x: x.logsumexp(1),
}


@pytest.mark.parametrize("call", GRAPH_CALLS, ids=str)
def test_create_graph_requires_grad_matches_torch(call):
    """Whether a first-order gradient (create_graph=True, constant grad_output) is itself
    differentiable depends on the formula's ops; ours match torch's."""
    flags = []
    for lib in (torch, retrograd):
        x = tensor(lib, X.astype(np.float64) + 2, True)
        (g,) = lib.autograd.grad(GRAPH_CALLS[call](lib, x).sum(), x, create_graph=True)
        flags.append(g.requires_grad)
    assert flags[0] == flags[1]


@pytest.mark.parametrize("p", [2, 1, inf, -inf, 3, 1.5, 0.5, 0, -1])
def test_norm_gradients_at_zero_match_torch(p):
    """torch's vector_norm backward: 0 where the norm is 0 (p=2), sgn-based elsewhere."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, dim in [(np.zeros((2, 2)), None), (np.array([[0.0, 0], [1, -2]]), 1)]:
            x_t = tensor(torch, a, True)
            x_r = tensor(retrograd, a, True)
            t = torch.norm(x_t, p, dim=dim).sum()
            r = retrograd.norm(x_r, p, dim=dim).sum()
            gt = torch.autograd.grad(t, x_t, allow_unused=True)[0]
            gr = retrograd.autograd.grad(r, x_r, allow_unused=True)[0]
            assert (gt is None) == (gr is None)
            if gt is not None:
                np.testing.assert_allclose(gr.numpy(), gt.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("p", [2, 1, inf, 3, 1.5, 0.5])
def test_norm_second_order_matches_torch(p):
    assert_same_grads(lambda L, x: L.norm(x, p, dim=1), np.array([[0.3, -0.5], [1, -2]]),
                      order2=True)


# --- named results, dispatch, warnings -------------------------------------------------------


def test_max_dim_returns_named_pair_like_torch():
    x_r, x_t = tensor(retrograd, X), tensor(torch, X)
    ours, theirs = x_r.max(1), x_t.max(1)
    assert type(ours).__name__ == type(theirs).__name__ == "max"
    assert isinstance(ours, tuple) and len(ours) == 2
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    values, indices = ours
    assert values is ours[0] and indices is ours[1]
    assert repr(ours).startswith("retrograd.return_types.max(\nvalues=tensor(")
    back = pickle.loads(pickle.dumps(ours))
    assert type(back) is type(ours)
    np.testing.assert_array_equal(back.indices.numpy(), theirs.indices.numpy())
    mm = retrograd.aminmax(x_r, dim=0)
    np.testing.assert_array_equal(mm.min.numpy(), torch.aminmax(x_t, dim=0).min.numpy())
    np.testing.assert_array_equal(mm.max.numpy(), torch.aminmax(x_t, dim=0).max.numpy())


def test_max_min_grad_fn_names_match_torch():
    x_r, x_t = tensor(retrograd, X, True), tensor(torch, X, True)
    for call in (lambda x: x.max(), lambda x: x.max(1)[0], lambda x: x.min(0, True).values,
                 lambda x: x.median(1).values, lambda x: x.nanmedian(),
                 lambda x: x.var(1, correction=0), lambda x: retrograd.std_mean(x)[0]
                 if isinstance(x, retrograd.Tensor) else torch.std_mean(x)[0]):
        assert call(x_r).grad_fn.name() == call(x_t).grad_fn.name()
    assert x_r.max(1).indices.grad_fn is None and not x_r.max(1).indices.requires_grad


def test_binary_max_dispatches_to_maximum():
    a, b = X, X[::-1].copy()
    if not hasattr(retrograd, "maximum"):
        with pytest.raises(NotImplementedError, match="maximum"):
            retrograd.max(tensor(retrograd, a), tensor(retrograd, b))
        return
    for name in ("max", "min"):
        ours = getattr(retrograd, name)(tensor(retrograd, a), tensor(retrograd, b))
        theirs = getattr(torch, name)(tensor(torch, a), tensor(torch, b))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        ours = getattr(tensor(retrograd, a), name)(other=tensor(retrograd, b))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_degrees_of_freedom_warning_matches_torch():
    for name in ("var", "std", "var_mean", "std_mean"):
        msgs = []
        for lib in (torch, retrograd):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                getattr(lib, name)(tensor(lib, np.ones(1, np.float32)))
            msgs.append([str(m.message).split(" (Triggered")[0] for m in w])
        assert msgs[0] == msgs[1]


def test_functional_softmax_implicit_dim_matches_torch():
    for name in ("softmax", "log_softmax"):
        results, msgs = [], []
        for lib in (torch, retrograd):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                results.append(getattr(lib.nn.functional, name)(tensor(lib, X)).numpy())
            msgs.append([str(m.message) for m in w])
        np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
def test_float32_stable_and_accurate(name):
    """Max subtraction keeps huge inputs finite; float32 values match torch to rtol 1e-5."""
    for scale, shift in [(1.0, 0.0), (30.0, 0.0), (1.0, 1e4), (1.0, -1e4)]:
        a = (RNG.standard_normal((4, 6)) * scale + shift).astype(np.float32)
        ours = getattr(tensor(retrograd, a), name)(1).numpy()
        theirs = getattr(tensor(torch, a), name)(1).numpy()
        assert np.isfinite(ours).all()
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "var", "std", "norm", "amax",
                                  "nansum", "cumsum", "cumprod"])
def test_float32_reductions_match_torch(name):
    a = RNG.uniform(0.5, 1.5, (5, 7)).astype(np.float32)
    for args in ((), (1,), (0,)):
        if name in ("cumsum", "cumprod") and not args:
            continue
        ours = getattr(tensor(retrograd, a), name)(*args).numpy()
        theirs = getattr(tensor(torch, a), name)(*args).numpy()
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


# NOTE [Running scans]: torch's CPU scans carry the running value in the accumulation type
# (float64 for float32), so over many elements their float32 results are not NumPy's. Shapes
# on both sides of the kernel's choice (slices across the scanned axis of >= 512 elements run
# as a loop of vectorized steps), every input dtype torch scans, and dtype= casts first.
SCAN_SHAPES = [((40, 700), 0), ((40, 700), 1), ((2, 600, 3), 1), ((900,), 0), ((3, 1, 600), 1),
               ((0, 5), 1)]


@pytest.mark.parametrize("shape, dim", SCAN_SHAPES)
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "logcumsumexp"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int16", "bool"])
def test_scans_equal_torch_bit_for_bit(shape, dim, name, dtype):
    rng = np.random.default_rng(3)
    if name == "logcumsumexp" and dtype in ("int16", "bool"):
        return  # torch has no integer kernel: the error is compared in the op samples
    a = rng.standard_normal(shape) * (10 if name == "logcumsumexp" else 1)
    if name == "cumprod":
        a = np.abs(a) * 0.5 + 0.75  # a long product that stays in range
    if name == "logcumsumexp" and a.size:
        a.flat[::7], a.flat[::11] = -inf, nan

    def run(lib):
        t = tensor(lib, a.astype(np.float32)).to(getattr(lib, dtype)) if dtype != "int16" \
            else tensor(lib, (a * 3).astype(np.int16))
        out = getattr(lib, name)(t, dim)
        return str(out.dtype).split(".")[1], out.float().numpy() if out.is_floating_point() \
            else out.numpy()

    (ours_dt, ours), (theirs_dt, theirs) = run(retrograd), run(torch)
    assert ours_dt == theirs_dt
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("out_dtype", ["float64", "float16", "int64"])
def test_scan_dtype_casts_the_input_first(out_dtype):
    a = np.random.default_rng(4).standard_normal((30, 600)).astype(np.float32) * 3
    got = retrograd.from_numpy(a).cumsum(1, dtype=getattr(retrograd, out_dtype))
    want = torch.from_numpy(a).cumsum(1, dtype=getattr(torch, out_dtype))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scan_gradients_equal_torch_bit_for_bit(name, dim):
    rng = np.random.default_rng(5)
    a = (np.abs(rng.standard_normal((30, 600))) * 0.5 + 0.75).astype(np.float32)
    g = rng.standard_normal((30, 600)).astype(np.float32)
    grads = []
    for lib in (retrograd, torch):
        x = tensor(lib, a, requires_grad=True)
        getattr(lib, name)(x, dim).backward(tensor(lib, g))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)
