"""sort, argsort, msort, topk, kthvalue, isin, scatter_reduce and diag against torch: dtypes, ties,
NaN, dims, keepdim, out= and errors.

torch leaves the order of equal values unspecified for topk and kthvalue (retrograd returns the
stable order), so on ties those compare values, and check that the indices select them.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

LIBS = (retrograd, torch)
nan = float("nan")


def mk(lib, values, dtype="float32", requires_grad=False):
    a = np.array(values, dtype=dtype)
    t = lib.from_numpy(a.copy())
    return t.requires_grad_() if requires_grad else t


def np_of(t):
    if isinstance(t, np.ndarray):
        return t
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.asarray(t.numpy())


def same(ours, theirs):
    """Same values (NaN equal), shape and dtype."""
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(np_of(ours), np_of(theirs))


def error_of(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - compared type and message
        return type(exc), str(exc)
    return None


def same_error(fn):
    """fn(lib) raises the same exception type and message on both libraries."""
    ours, theirs = error_of(lambda: fn(retrograd)), error_of(lambda: fn(torch))
    assert theirs is not None
    assert ours == theirs


def selects(x, dim, indices, values):
    """x gathered at indices along dim is values (NaN equal)."""
    np.testing.assert_array_equal(np.take_along_axis(np_of(x), np_of(indices), dim),
                                  np_of(values))


TIES = [[3, nan, 1, 3, nan, 2, 1, 3], [0, 0, -1, 5, 5, nan, 0, -1]]
DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "int8"]


def _ties(dtype):
    a = np.array(TIES)
    if np.dtype(dtype).kind != "f":
        a = np.nan_to_num(a, nan=7).astype(dtype)
    return a


# --- sort, argsort, msort ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stable_sort_matches_torch_with_ties_and_nan(dtype, descending, dim):
    a = _ties(dtype)
    r = [lib.sort(mk(lib, a, dtype), dim=dim, descending=descending, stable=True) for lib in LIBS]
    same(r[0].values, r[1].values)
    same(r[0].indices, r[1].indices)
    a_ = [lib.argsort(mk(lib, a, dtype), dim=dim, descending=descending, stable=True)
          for lib in LIBS]
    same(a_[0], a_[1])


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_unstable_sort_values_match_and_indices_select_them(dtype):
    a = _ties(dtype)
    for descending in (False, True):
        ours = retrograd.sort(mk(retrograd, a, dtype), descending=descending)
        theirs = torch.sort(mk(torch, a, dtype), descending=descending)
        same(ours.values, theirs.values)
        selects(a, -1, ours.indices, ours.values)
        same(retrograd.argsort(mk(retrograd, a, dtype), descending=descending), ours.indices)


def test_sort_of_bool_bfloat16_and_nan_first_when_descending():
    for dtype, lib_dtype in (("bool", None), ("float32", "bfloat16")):
        a = np.array([[1, 0, 1, 0], [0, 0, 1, 1]], dtype=dtype)
        r = []
        for lib in LIBS:
            x = mk(lib, a, dtype)
            if lib_dtype:
                x = x.to(getattr(lib, lib_dtype))
            r.append(lib.sort(x, descending=True, stable=True))
        same(r[0].values, r[1].values)
        same(r[0].indices, r[1].indices)
    r = retrograd.sort(mk(retrograd, [1.0, nan, -math.inf, nan]), descending=True)
    assert np.isnan(np_of(r.values)[:2]).all() and r.indices.tolist()[:2] == [1, 3]


def test_sort_result_types_node_names_and_layout():
    x = mk(retrograd, np.arange(12.0).reshape(4, 3)[::-1].T.copy(), requires_grad=True)
    r = x.sort()
    assert type(r).__name__ == "sort" and r._fields == ("values", "indices")
    values, indices = r
    assert values is r.values and indices is r[1]
    assert values.grad_fn.name() == "SortBackward0" and not indices.requires_grad
    assert x.sort(stable=False).values.grad_fn.name() == "SortBackward1"
    assert retrograd.msort(x).grad_fn.name() == "SortBackward0"


@pytest.mark.parametrize("view", [
    lambda x: x[:, ::2], lambda x: x.permute(2, 0, 1), lambda x: x[:1, :1].expand(3, 4, 5),
    lambda x: x[0].t(), lambda x: x[:, :1].expand(4, 3, 5).transpose(0, 2),
    lambda x: x.transpose(0, 1)[::2, :, 1:3]], ids=lambda v: "")
def test_output_layouts_match_torch(view):
    # sort's outputs are laid out like the input (dense), topk's and kthvalue's row-major
    a = np.random.default_rng(0).standard_normal((4, 6, 5)).astype(np.float32)
    for dim in (0, -1):
        strides = []
        for lib in LIBS:
            x = view(lib.from_numpy(a.copy()))
            r = lib.sort(x, dim)
            strides.append((r.values.stride(), r.indices.stride(), lib.argsort(x, dim).stride(),
                            lib.msort(x).stride(), lib.topk(x, 2, dim).values.stride(),
                            lib.kthvalue(x, 1, dim, True).indices.stride()))
        assert strides[0] == strides[1]


def test_sort_gradient_follows_the_stable_order():
    a = np.array([[2.0, 1.0, 2.0, 0.5], [1.0, 1.0, 3.0, 1.0]])
    w = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    grads = []
    for lib in LIBS:
        x = mk(lib, a, "float64", requires_grad=True)
        (x.sort(dim=-1, descending=True, stable=True).values * lib.from_numpy(w)).sum().backward()
        grads.append(x.grad)
    same(grads[0], grads[1])


def test_sort_zero_dim_and_empty():
    for lib in LIBS:
        r = lib.sort(lib.tensor(3.0), dim=-1)
        assert r.values.item() == 3.0 and r.indices.item() == 0
    same(retrograd.sort(retrograd.zeros(2, 0), 0).indices, torch.sort(torch.zeros(2, 0), 0).indices)
    same(retrograd.msort(mk(retrograd, _ties("int64"))), torch.msort(mk(torch, _ties("int64"))))


def test_sort_errors():
    same_error(lambda lib: lib.sort(lib.tensor(3.0), dim=1))
    same_error(lambda lib: lib.sort(lib.ones(2, 3), dim=2))
    same_error(lambda lib: lib.argsort(lib.ones(2, 3), dim=-3))


# --- topk, kthvalue -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "uint8"] + ["uint8"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dim", [0, -1])
def test_topk_values_match_torch_with_ties_and_nan(dtype, largest, dim):
    a = _ties(dtype)
    k = a.shape[dim] // 2 + 1
    ours = retrograd.topk(mk(retrograd, a, dtype), k, dim, largest)
    theirs = torch.topk(mk(torch, a, dtype), k, dim, largest)
    same(ours.values, theirs.values)
    selects(a, dim, ours.indices, ours.values)
    assert ours.indices.dtype is retrograd.int64 and ours.values.is_contiguous()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "uint8"])
def test_long_rows_select_the_stable_orders_first_k(dtype):
    # long rows select by partition: the result must still be the stable sort's first k
    rng = np.random.default_rng(5)
    a = rng.integers(0, 40, (3, 700, 2)).astype(np.float32)
    a[rng.random(a.shape) < 0.05] = nan
    if dtype in ("int64", "uint8"):
        a = np.nan_to_num(a, nan=50)
    x = retrograd.from_numpy(a.astype(dtype if dtype != "bfloat16" else "float32"))
    x = x.to(retrograd.bfloat16) if dtype == "bfloat16" else x
    for dim in (1, 0):
        n = x.shape[dim]
        for k in (1, 2, n // 3, n - 1):
            for largest in (True, False):
                r = x.topk(k, dim, largest)
                s = x.sort(dim, descending=largest, stable=True)
                same(r.values, s.values.narrow(dim, 0, k))
                same(r.indices, s.indices.narrow(dim, 0, k))
            kth = x.kthvalue(k, dim)
            s = x.sort(dim, stable=True)
            same(kth.values, s.values.select(dim, k - 1))
            same(kth.indices, s.indices.select(dim, k - 1))
    t = torch.topk(torch.from_numpy(a.astype(np.float32)), 9, 1)
    same(retrograd.topk(retrograd.from_numpy(a.astype(np.float32)), 9, 1).values, t.values)


def test_topk_unsorted_gives_torchs_set_of_values():
    a = np.random.default_rng(0).standard_normal((3, 40)).astype(np.float32)
    ours = retrograd.topk(mk(retrograd, a), 7, sorted=False)
    theirs = torch.topk(mk(torch, a), 7, sorted=False)
    np.testing.assert_array_equal(np.sort(np_of(ours.values)), np.sort(np_of(theirs.values)))
    selects(a, -1, ours.indices, ours.values)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_matches_torch_with_ties_and_nan(dtype, keepdim):
    a = _ties(dtype)
    for dim in (0, 1, -1):
        for k in range(1, a.shape[dim] + 1):
            ours = retrograd.kthvalue(mk(retrograd, a, dtype), k, dim, keepdim)
            theirs = torch.kthvalue(mk(torch, a, dtype), k, dim, keepdim)
            same(ours.values, theirs.values)
            assert tuple(ours.indices.shape) == tuple(theirs.indices.shape)
            idx = np_of(ours.indices) if keepdim else np.expand_dims(np_of(ours.indices), dim)
            vals = np_of(ours.values) if keepdim else np.expand_dims(np_of(ours.values), dim)
            np.testing.assert_array_equal(np.take_along_axis(a, idx, dim), vals)


def test_topk_and_kthvalue_results_and_gradients():
    a = np.array([[0.3, -1.0, 2.0, 0.7], [1.5, 0.2, -0.4, 0.9]])
    for name, call in (("topk", lambda x: x.topk(2, dim=1)),
                       ("kthvalue", lambda x: x.kthvalue(2, 0, keepdim=True))):
        grads = []
        for lib in LIBS:
            x = mk(lib, a, "float64", requires_grad=True)
            r = call(x)
            assert type(r).__name__ == name
            assert r.values.grad_fn.name() == name.capitalize() + "Backward0"
            (r.values * 3).sum().backward()
            grads.append(x.grad)
        same(grads[0], grads[1])


def test_topk_kthvalue_zero_dim_and_empty():
    for lib in LIBS:
        x = lib.tensor(3.0)
        assert lib.topk(x, 1).values.item() == 3.0 and lib.topk(x, 0).indices.item() == 0
        assert lib.kthvalue(x, 1).values.item() == 3.0
    r = [lib.topk(lib.zeros(2, 0), 0) for lib in LIBS]
    same(r[0].values, r[1].values)
    assert r[0].indices.stride() == r[1].indices.stride()


@pytest.mark.parametrize("call", [
    lambda lib: lib.topk(lib.ones(6), 7),
    lambda lib: lib.topk(lib.ones(6), -1),
    lambda lib: lib.topk(lib.ones(1, 3), 2, dim=0),
    lambda lib: lib.topk(lib.tensor(1.0), 2),
    lambda lib: lib.topk(lib.ones(3), 1, dim=1),
    lambda lib: lib.topk(lib.tensor([True, False]), 1),
    lambda lib: lib.kthvalue(lib.ones(6), 7),
    lambda lib: lib.kthvalue(lib.ones(6), 0),
    lambda lib: lib.kthvalue(lib.ones(1, 3), 2, dim=0),
    lambda lib: lib.kthvalue(lib.ones(1, 3), 2, dim=2),
    lambda lib: lib.kthvalue(lib.zeros(2, 0), 1),
    lambda lib: lib.kthvalue(lib.tensor([True, False]), 1),
], ids=lambda c: "")
def test_topk_kthvalue_errors(call):
    same_error(call)


# --- out= -----------------------------------------------------------------------------------


def test_out_variants_write_the_given_tensors():
    a = np.array([[2.0, -1.0, 5.0], [0.5, 4.0, 1.0]], np.float32)
    for lib in LIBS:
        x = mk(lib, a)
        v, i = lib.empty(0), lib.empty(0, dtype=lib.int64)
        r = lib.sort(x, 1, True, out=(v, i))
        assert r.values is v and r.indices is i and type(r).__name__ == "sort_out"
        assert v.tolist() == [[5.0, 2.0, -1.0], [4.0, 1.0, 0.5]] and i.tolist()[0] == [2, 0, 1]
        v, i = lib.empty(0), lib.empty(0, dtype=lib.int64)
        r = lib.topk(x, 1, out=[v, i])
        assert r.values is v and v.tolist() == [[5.0], [4.0]]
        v, i = lib.empty(0), lib.empty(0, dtype=lib.int64)
        r = lib.kthvalue(x, 2, 0, out=(v, i))
        assert r.indices is i and v.tolist() == [2.0, 4.0, 5.0]
        m = lib.empty(2, 3)
        assert lib.msort(x, out=m) is m and m.tolist()[0] == [0.5, -1.0, 1.0]
        j = lib.empty(0, dtype=lib.int64)
        assert lib.argsort(x, stable=True, out=j) is j and j.tolist()[0] == [1, 0, 2]


def test_out_variant_errors_and_resize_warning():
    same_error(lambda lib: lib.sort(lib.ones(3), out=(lib.empty(3), lib.empty(3))))
    same_error(lambda lib: lib.sort(lib.ones(3), out=(lib.empty(3, dtype=lib.int64),
                                                      lib.empty(3, dtype=lib.int64))))
    same_error(lambda lib: lib.topk(lib.ones(3, dtype=lib.float64), 1,
                                    out=(lib.empty(3), lib.empty(3, dtype=lib.int64))))
    same_error(lambda lib: lib.sort(lib.ones(3, requires_grad=True),
                                    out=(lib.empty(3), lib.empty(3, dtype=lib.int64))))
    same_error(lambda lib: lib.sort(lib.ones(3), out=(lib.empty(3), lib.empty(3, dtype=lib.int64),
                                                      lib.empty(3))))
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.topk(lib.ones(3), 2, out=(lib.empty(3), lib.empty(2, dtype=lib.int64)))
        assert len(w) == 1 and "was resized since it had shape [3]" in str(w[0].message)


# --- isin -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype,test_dtype", [("int64", "int64"), ("int32", "int64"),
                                              ("float32", "int64"), ("float16", "float32"),
                                              ("uint8", "int8"), ("float64", "float32")])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_torch(dtype, test_dtype, invert):
    e = np.array([[0, 1, 2.5, -1], [3, 1, 0, 7]])
    e = e.astype(dtype) if np.dtype(dtype).kind == "f" else np.abs(e).astype(dtype)
    t = np.array([1, 7, 0]).astype(test_dtype)
    r = [lib.isin(mk(lib, e, dtype), mk(lib, t, test_dtype), invert=invert) for lib in LIBS]
    same(r[0], r[1])
    r = [lib.isin(mk(lib, e, dtype), mk(lib, t, test_dtype), assume_unique=True)
         for lib in LIBS]
    same(r[0], r[1])


def test_isin_nan_scalars_and_shapes():
    cases = [
        lambda lib: lib.isin(mk(lib, [1.0, 2.5, nan]), mk(lib, [2, nan]), invert=True),
        lambda lib: lib.isin(mk(lib, [1.0, 2.5, nan]), mk(lib, [2, nan])),
        lambda lib: lib.isin(mk(lib, [1, 2, 3], "int64"), 2),
        lambda lib: lib.isin(2.0, mk(lib, [1, 2, 3], "int64")),
        lambda lib: lib.isin(mk(lib, [1, 2, 3], "int64"), 2.5),
        lambda lib: lib.isin(mk(lib, 3, "int64"), mk(lib, [3], "int64")),
        lambda lib: lib.isin(mk(lib, [[1, 2], [3, 4]], "int64"), mk(lib, [[4], [1]], "int64")),
        lambda lib: lib.isin(mk(lib, np.zeros((0, 2)), "float32"), mk(lib, [1.0])),
        # compared in the promoted dtype: 2049 becomes 2048 in float16 and bfloat16
        lambda lib: lib.isin(mk(lib, [2048.0, 3.0], "float16"), mk(lib, [2049, 3], "int64")),
        lambda lib: lib.isin(mk(lib, [2048.0, 3.0]).to(lib.bfloat16), mk(lib, [2049], "int64")),
    ]
    for case in cases:
        same(case(retrograd), case(torch))
    x = mk(retrograd, [1.0, 2.0], requires_grad=True)
    assert not retrograd.isin(x, mk(retrograd, [1.0])).requires_grad
    for lib in LIBS:
        out = lib.empty(2, dtype=lib.bool)
        assert lib.isin(mk(lib, [1, 2], "int64"), mk(lib, [1], "int64"), out=out) is out
        assert out.tolist() == [True, False]


def test_isin_errors():
    same_error(lambda lib: lib.isin(mk(lib, [1, 2], "int64"), mk(lib, [True], "bool")))
    same_error(lambda lib: lib.isin(mk(lib, [True, False], "bool"), mk(lib, [1], "int64")))
    same_error(lambda lib: lib.isin(mk(lib, [True, False], "bool"), True))
    with pytest.raises(TypeError, match=r"isin\(\) received an invalid combination of arguments"):
        retrograd.isin(1, 2)


# --- scatter_reduce -------------------------------------------------------------------------

REDUCES = ("sum", "prod", "mean", "amax", "amin")
IDX = [[0, 1, 0, 3], [1, 1, 0, 3], [3, 1, 0, 0]]


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "float16"])
def test_scatter_reduce_values_match_torch(reduce, include_self, dtype):
    rng = np.random.default_rng(3)
    base = rng.integers(-9, 9, (4, 4)).astype(dtype)
    src = rng.integers(-9, 9, (3, 4)).astype(dtype)
    for dim in (0, 1):
        r = [lib.scatter_reduce(mk(lib, base, dtype), dim, mk(lib, IDX, "int64"),
                                mk(lib, src, dtype), reduce, include_self=include_self)
             for lib in LIBS]
        same(r[0], r[1])
        r = [mk(lib, base, dtype).scatter_reduce_(dim, mk(lib, IDX, "int64"), mk(lib, src, dtype),
                                                  reduce, include_self=include_self)
             for lib in LIBS]
        same(r[0], r[1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_scatter_reduce_16_bit_floats_round_like_torch(dtype):
    # torch accumulates in float32 and rounds the sum (then the mean) to the 16-bit dtype
    rng = np.random.default_rng(2)
    base, src = rng.standard_normal(7), rng.standard_normal(300)
    idx = rng.integers(0, 7, 300)
    for reduce in REDUCES:
        r = [lib.scatter_reduce(mk(lib, base).to(getattr(lib, dtype)), 0, mk(lib, idx, "int64"),
                                mk(lib, src).to(getattr(lib, dtype)), reduce) for lib in LIBS]
        same(r[0], r[1])


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_nan_bool_zero_dim_and_larger_src(reduce):
    base, src = [1.0, nan, 3.0, 4.0], [nan, 2.0, 5.0, -1.0, 0.5]
    idx = [0, 1, 2, 2]
    r = [lib.scatter_reduce(mk(lib, base), 0, mk(lib, idx, "int64"), mk(lib, src), reduce)
         for lib in LIBS]
    same(r[0], r[1])
    r = [lib.scatter_reduce(lib.tensor(2.0), 0, lib.tensor(0), lib.tensor(5.0), reduce,
                            include_self=False) for lib in LIBS]
    same(r[0], r[1])
    if reduce != "mean":
        r = [lib.scatter_reduce(mk(lib, [True, False, False], "bool"), 0,
                                mk(lib, [0, 1, 1], "int64"), mk(lib, [False, True, False], "bool"),
                                reduce) for lib in LIBS]
        same(r[0], r[1])


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_with_ties_and_zeros(reduce, include_self):
    # ties for amax/amin (self and src, and within src) and zeros for prod, as torch handles them
    base = np.array([[2.0, 0.0, 1.0], [3.0, 5.0, 0.0]])
    src = np.array([[2.0, 0.0, 4.0], [2.0, 5.0, 3.0], [1.0, 1.0, 0.0]])
    idx = [[0, 0, 1], [0, 1, 0], [1, 0, 1]]
    grads = []
    for lib in LIBS:
        x, s = mk(lib, base, "float64", True), mk(lib, src, "float64", True)
        out = lib.scatter_reduce(x, 0, mk(lib, idx, "int64"), s, reduce,
                                 include_self=include_self)
        assert out.grad_fn.name() == "ScatterReduceBackward0"
        (out * lib.from_numpy(np.arange(6.0).reshape(2, 3) + 1)).sum().backward()
        grads.append((x.grad, s.grad))
    same(grads[0][0], grads[1][0])
    same(grads[0][1], grads[1][1])


def test_scatter_reduce_prod_double_backward_error_with_two_zeros():
    def run(lib):
        x = mk(lib, [2.0, 3.0], "float64", True)
        s = mk(lib, [0.0, 0.0, 4.0], "float64", True)
        out = lib.scatter_reduce(x, 0, mk(lib, [0, 0, 1], "int64"), s, "prod")
        (g,) = lib.autograd.grad(out.sum(), s, create_graph=True)
        assert g.tolist() == [0.0, 0.0, 3.0] and g.grad_fn.name() == "torch::autograd::Error"
        g.sum().backward()

    same_error(run)


def test_scatter_reduce_in_place_history():
    for lib in LIBS:
        leaf = mk(lib, [1.0, 2.0, 3.0], requires_grad=True)
        y = leaf * 1
        v = y._version
        y.scatter_reduce_(0, mk(lib, [0, 0], "int64"), mk(lib, [4.0, 5.0]), "amax")
        assert y._version == v + 1 and y.grad_fn.name() == "ScatterReduceBackward0"
        y.sum().backward()
        assert leaf.grad.tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "foo"),
    lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([0.0]), lib.ones(1), "sum"),
    lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1).double(), "sum"),
    lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([5]), lib.ones(1), "prod"),
    lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([-1]), lib.ones(1), "amin"),
    lambda lib: lib.ones(3).scatter_reduce(1, lib.tensor([0]), lib.ones(1), "sum"),
    lambda lib: lib.ones(3, dtype=lib.bool).scatter_reduce(
        0, lib.tensor([0]), lib.ones(1, dtype=lib.bool), "mean"),
    lambda lib: lib.scatter_reduce(lib.ones(3, requires_grad=True), 0, lib.tensor([0]),
                                   lib.ones(1), "sum", out=lib.empty(3)),
], ids=lambda c: "")
def test_scatter_reduce_errors(call):
    same_error(call)


def test_scatter_reduce_unknown_reduce_is_refused():
    # torch 2.13 returns self unchanged for reduce="max"; retrograd refuses it like "foo"
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, "
                       "amax or amin, got max"):
        retrograd.ones(3).scatter_reduce(0, retrograd.tensor([0]), retrograd.ones(1), "max")


def test_scatter_reduce_src_larger_than_index():
    # torch computes the forward, but its backward fails on the shapes; retrograd's gives src
    # a gradient of src's shape, zero outside index's corner
    idx = [[1, 0], [2, 2]]
    src = np.arange(6.0).reshape(2, 3)
    r = [lib.scatter_reduce(mk(lib, np.ones((3, 3)), "float64"), 1, mk(lib, idx, "int64"),
                            mk(lib, src, "float64"), "sum") for lib in LIBS]
    same(r[0], r[1])
    s = mk(retrograd, src, "float64", True)
    out = retrograd.scatter_reduce(retrograd.ones(3, 3, dtype=retrograd.float64), 1,
                                   mk(retrograd, idx, "int64"), s, "sum")
    out.sum().backward()
    assert s.grad.tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]


# --- diag, diag_embed, diagflat -------------------------------------------------------------


@pytest.mark.parametrize("offset", [-4, -1, 0, 2, 5])
def test_diag_matches_torch(offset):
    v, m = np.arange(1, 4), np.arange(12).reshape(3, 4)
    for a, dtype in ((v, "int64"), (v, "float32"), (m, "float64"), (m.T, "int32")):
        r = [lib.diag(mk(lib, a, dtype), offset) for lib in LIBS]
        same(r[0], r[1])
        assert r[0].stride() == r[1].stride()
    r = [lib.diagflat(mk(lib, m, "float32"), offset) for lib in LIBS]
    same(r[0], r[1])


def test_diag_embed_dims_and_gradients():
    a = np.arange(6.0).reshape(2, 3)
    for args in ((0, -2, -1), (1, 0, 2), (-1, 2, 0), (2, 1, -1)):
        r, grads = [], []
        for lib in LIBS:
            x = mk(lib, a, "float64", True)
            out = lib.diag_embed(x, *args)
            (out * lib.from_numpy(np.arange(out.numel(), dtype=np.float64).reshape(out.shape))
             ).sum().backward()
            r.append(out)
            grads.append(x.grad)
        same(r[0], r[1])
        assert r[0].grad_fn.name() == "DiagEmbedBackward0" and r[0].stride() == r[1].stride()
        same(grads[0], grads[1])
    for lib in LIBS:
        m = mk(lib, np.ones((2, 3)), requires_grad=True)
        assert lib.diag(m).grad_fn.name() == "DiagonalBackward0_copy"
        assert lib.diag(m)._base is None


def test_diag_out_and_errors():
    for lib in LIBS:
        out = lib.empty(3, 3)
        assert lib.diag(lib.ones(3), out=out) is out and out.sum().item() == 3.0
    same_error(lambda lib: lib.diag(lib.ones(2, 2, 2)))
    same_error(lambda lib: lib.diag(lib.tensor(2.0)))
    same_error(lambda lib: lib.diag_embed(lib.ones(2, 2), 0, 0, 0))
    same_error(lambda lib: lib.diag_embed(lib.ones(2, 2), 0, 0, 3))
    same_error(lambda lib: lib.diag_embed(lib.tensor(2.0)))
    r = [lib.diagflat(lib.tensor(2.0)) for lib in LIBS]
    same(r[0], r[1])
    # torch writes out= here and leaves a broken grad_fn; retrograd refuses as other out= ops do
    with pytest.raises(RuntimeError, match=r"^diag\(\): functions with out=\.\.\. arguments "
                       r"don't support automatic differentiation"):
        retrograd.diag(retrograd.ones(3, requires_grad=True), out=retrograd.empty(3, 3))


def test_constants():
    for name in ("inf", "nan", "pi", "e"):
        ours, theirs = getattr(retrograd, name), getattr(torch, name)
        assert ours == theirs or (math.isnan(ours) and math.isnan(theirs))
