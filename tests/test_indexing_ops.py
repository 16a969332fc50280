"""Indexing: __getitem__/__setitem__ semantics, node names and views against torch (including a
seeded random comparison), errors, dtypes, and the in-place indexing ops."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def _names(t):
    out, fn = [], t.grad_fn
    while fn is not None and "AccumulateGrad" not in fn.name():
        out.append(fn.name())
        nexts = [f for f, _ in fn.next_functions if f is not None]
        fn = nexts[0] if nexts else None
    return out


def _conv(lib, index):
    if isinstance(index, tuple):
        return tuple(_conv(lib, i) for i in index)
    if isinstance(index, np.ndarray):
        return lib.from_numpy(index.copy())
    return index


def _both(data, fn):
    """fn(lib, x) on retrograd and torch with x a leaf requiring grad; returns (ours, theirs)."""
    out = []
    for lib in (retrograd, torch):
        x = lib.from_numpy(np.array(data, copy=True)).requires_grad_(data.dtype.kind == "f")
        out.append((x, fn(lib, x)))
    return out


GETITEM_CASES = [
    ((3, 4, 5), 0), ((3, 4, 5), (slice(None), slice(1, None))), ((3, 4, 5), None),
    ((3, 4, 5), slice(None)), ((3, 4, 5), Ellipsis), ((3, 4, 5), (0, 1)),
    ((3, 4, 5), (slice(1, 3), 0)), ((3, 4, 5), (Ellipsis, 0)), ((3, 4, 5), (None, 0, None)),
    ((3, 4, 5), True), ((3, 4, 5), False), ((3, 4, 5), slice(None, None, 2)),
    ((3, 4, 5), np.array([0, 2])), ((3, 4, 5), (0, np.array([0, 2]))),
    ((3, 4, 5), (slice(None), np.array([0, 2]), 1)), ((3, 4, 5), (np.array([0, 1]), slice(None),
                                                                   np.array([1, 2]))),
    ((3, 4, 5), (slice(0, 2), np.array([1, 2]))), ((3, 4, 5), np.array(1)),
    ((3, 4, 5), (slice(None), slice(None))), ((3, 4, 5), (slice(None), slice(0, 4))),
    ((3, 4, 5), (slice(None), slice(-4, None))), ((3, 4, 5), (slice(None), None, np.array([1]))),
    ((3, 4, 5), (True, np.array([0, 1]))), ((3, 4, 5), np.array([True, False, True])),
    ((3, 4), np.array([[True, False, True, True], [False] * 4, [True] * 4])),
    ((), Ellipsis), ((), None), ((), True), ((), ()),
]


@pytest.mark.parametrize("shape,index", GETITEM_CASES, ids=str)
def test_getitem_matches_torch(shape, index):
    data = np.random.default_rng(0).standard_normal(shape)
    (x, y), (tx, ty) = _both(data, lambda lib, x: x[_conv(lib, index)])
    assert tuple(y.shape) == tuple(ty.shape)
    assert _names(y) == _names(ty)
    assert y._is_view() == ty._is_view()
    if y.numel():
        assert y.stride() == ty.stride()
        assert y.storage_offset() == ty.storage_offset()
        assert np.shares_memory(y.numpy() if not y.requires_grad else y.detach().numpy(),
                                x.detach().numpy()) == ty._is_view()
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    if y.numel():
        w = np.random.default_rng(1).standard_normal(y.shape)
        (y * retrograd.tensor(w)).sum().backward()
        (ty * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def _random_index(rng: random.Random, shape: tuple) -> tuple:
    dims, items = list(shape), []
    for _ in range(rng.randint(1, 4)):
        n = dims[0] if dims else 2
        r = rng.random()
        if r < 0.2:
            item = rng.randint(-n, n - 1)
        elif r < 0.45:
            item = slice(rng.choice([None, rng.randint(-n - 1, n + 1)]),
                         rng.choice([None, rng.randint(-n - 1, n + 1)]),
                         rng.choice([None, 1, 2, 3]))
        elif r < 0.55:
            item = None
        elif r < 0.6:
            item = Ellipsis
        elif r < 0.65:
            item = rng.choice([True, False])
        elif r < 0.8 or not dims:
            item = np.array([rng.randint(-n, n - 1) for _ in range(rng.randint(0, 3))],
                            dtype=np.int64)
        else:
            item = np.array([rng.random() < 0.5 for _ in range(n)])
        items.append(item)
        if dims and not (item is None or item is Ellipsis or isinstance(item, bool)):
            dims.pop(0)
    return tuple(items)


def _outcome(lib, data, index):
    x = lib.from_numpy(data.copy()).requires_grad_(True)
    try:
        y = x[_conv(lib, index)]
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return (type(e).__name__, str(e))
    w = np.random.default_rng(2).standard_normal(y.shape)
    (y * lib.from_numpy(w)).sum().backward()
    geometry = (y.stride(), y.storage_offset()) if y.numel() and 1 not in y.shape else None
    return (tuple(y.shape), geometry, y._is_view(), _names(y), y.detach().numpy().tolist(),
            x.grad.numpy().round(10).tolist())


def test_getitem_random_combinations_match_torch():
    """Seeded random index tuples (ints, slices with steps, None, Ellipsis, bools, int and bool
    tensors) agree with torch on everything, errors included. Strides of size-1 dims and double
    Ellipsis are left out: torch's values there follow TensorIterator internals."""
    rng = random.Random(1234)
    checked = 0
    for _ in range(400):
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 4)))
        data = np.random.default_rng(checked).standard_normal(shape)
        index = _random_index(rng, shape)
        if sum(i is Ellipsis for i in index) > 1:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = _outcome(retrograd, data, index), _outcome(torch, data, index)
        assert ours == theirs, (shape, index)
        checked += 1
    assert checked > 300


# --- __setitem__ ---------------------------------------------------------------------------------

SETITEM_CASES = [
    (0, "vec"), ((slice(None), 1), "col"), (slice(1, None), "vec"), (1, 2.5), (Ellipsis, "vec"),
    (None, "vec"), (True, "vec"), (False, "vec"), (np.array([0, 2]), "vec"),
    ((0, np.array([1, 3])), 7.0), ("mask", 0.0), ("mask", "masked"),
    ((slice(None), None, 0), "row1"), (slice(None, None, 2), "zero_dim"),
]


@pytest.mark.parametrize("index,value", SETITEM_CASES, ids=str)
def test_setitem_matches_torch(index, value):
    data = np.random.default_rng(3).standard_normal((3, 4))
    mask = data > 0
    results = []
    for lib in (retrograd, torch):
        leaf = lib.from_numpy(data.copy()).requires_grad_(True)
        x = leaf * 1
        idx = _conv(lib, mask if isinstance(index, str) else index)
        vals = {"vec": np.arange(4.0), "col": np.arange(3.0), "zero_dim": np.array(5.0),
                "row1": np.arange(3.0).reshape(3, 1),
                "masked": np.arange(float(mask.sum()))}
        v = value if not isinstance(value, str) else lib.from_numpy(vals[value]).requires_grad_()
        x[idx] = v
        w = np.random.default_rng(4).standard_normal(x.shape)
        (x * lib.from_numpy(w)).sum().backward()
        v_grad = v.grad if isinstance(v, lib.Tensor) else None
        results.append((x.grad_fn.name(), x.detach().numpy(), leaf.grad.numpy(),
                        None if v_grad is None else v_grad.numpy()))
    ours, theirs = results
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_setitem_writes_through_views_and_bumps_version():
    base = retrograd.zeros(3, 4)
    view = base[1:]
    v0 = base._version
    view[0, ::2] = 1.0
    assert base._version == v0 + 1
    np.testing.assert_array_equal(base.numpy()[1], [1, 0, 1, 0])
    base[np.array([0, 2])] = retrograd.tensor([9.0, 8.0, 7.0, 6.0])
    np.testing.assert_array_equal(base.numpy()[2], [9, 8, 7, 6])


def test_setitem_on_leaf_raises_like_torch():
    msgs = []
    for lib in (retrograd, torch):
        leaf = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            leaf[0] = 1.0
        msgs.append(str(info.value))
        with lib.no_grad():
            leaf[1] = 2.0
        assert leaf.detach().numpy().tolist() == [0.0, 2.0, 0.0]
    assert msgs[0] == msgs[1]


def test_setitem_int_tensor_values_cast_and_mismatch():
    x = retrograd.zeros(3, dtype=retrograd.int64)
    x[1] = 2.7
    x[retrograd.tensor([True, False, True])] = 5
    assert x.tolist() == [5, 2, 5]
    for lib in (retrograd, torch):
        y = lib.zeros(3, 4)
        with pytest.raises(RuntimeError, match="shape mismatch: value tensor of shape"):
            y[lib.tensor([0, 1])] = lib.ones(3)


# --- errors --------------------------------------------------------------------------------------

INDEX_ERRORS = [
    "x[5]", "x[-4]", "x[[5]]", "x[[0, -4]]", "x[0, 0, 0, 0]", "x[torch.tensor([True, False])]",
    "x[torch.tensor([0.5])]", "x[::-1]", "x[::0]", "x[1.5]", "x[[0, 1], [0, 1, 2]]",
    "x[:, [5]]", "s[0]", "s[1]", "x[0, 0, 0][0]", "x[0, 7]", "x[None, 0, 7]", "x[..., 7]",
    "x[[0, 1], :, [1, 7]]", "x[torch.tensor([[True]])]", "x[x > 0, 9]", "s[:]",
    "x[torch.tensor([0]).short()]",
    "x.gather(0, torch.tensor([[[5]]]))", "x.gather(0, torch.tensor([0]))",
    "x.gather(1, torch.zeros(4, 1, 1, dtype=torch.long))",
    "x.gather(0, torch.zeros(1, 5, 1, dtype=torch.long))",
    "x.gather(0, torch.zeros(1, 1, 1, dtype=torch.int16))", "x.gather(3, torch.zeros(1, 1, 1))",
    "x.scatter(0, torch.tensor([[[5]]]), 1.)",
    "x.scatter(0, torch.zeros(1, 1, 1, dtype=torch.long), torch.ones(1, 1, 1).double())",
    "x.scatter(0, torch.tensor([0]), 1.)",
    "x.scatter(0, torch.zeros(2, 2, 2, dtype=torch.long), torch.ones(1, 1, 1))",
    "x.scatter_add(0, torch.tensor([[[-1]]]), torch.ones(1, 1, 1))",
    "x.index_select(0, torch.tensor([5]))", "x.index_select(0, torch.tensor([-1]))",
    "x.index_select(0, torch.tensor([[0]]))", "x.index_select(0, torch.tensor([0.]))",
    "x.index_add(0, torch.tensor([0, 1]), torch.ones(3, 4, 5))",
    "x.index_add(0, torch.tensor([5]), torch.ones(1, 4, 5))",
    "x.index_add(0, torch.tensor([0]), torch.ones(1, 3, 5))",
    "x.index_add(0, torch.tensor([0]), torch.ones(1, 4, 5).double())",
    "x.index_add(0, torch.tensor([[0]]), torch.ones(1, 4, 5))",
    "x.masked_fill(torch.ones(3, 4, 5), 1.)", "x.masked_fill(torch.ones(3, 4, 5).long(), 1.)",
    "x.masked_fill(x > 0, torch.ones(2))", "x.masked_fill(torch.ones(2, 4, 5).bool(), 1.)",
    "x.clone().masked_fill_(torch.ones(2, 3, 4, 5).bool(), 1.)",
    "x.masked_select(torch.ones(3, 4, 5))", "x.masked_select(torch.ones(2, 4, 5).bool())",
    "x.take(torch.tensor([60]))", "x.take(torch.tensor([-61]))",
    "x.take(torch.tensor([0]).int())",
    "x.index_put((torch.tensor([0]),), torch.ones(1).double())",
    "x.index_put((torch.tensor([0]),), torch.ones(3))",
    "x.index_put((torch.tensor([5]),), torch.ones(1))",
    "x.index_put((torch.tensor([0]),) * 4, torch.ones(1))",
    "torch.take_along_dim(x, torch.tensor([0]), 0)",
]


@pytest.mark.parametrize("expr", INDEX_ERRORS)
def test_index_errors_match_torch(expr):
    results = []
    for lib in (torch, retrograd):
        env = {"x": lib.zeros(3, 4, 5), "s": lib.tensor(1.0), "torch": lib}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                eval(expr, env)  # noqa: S307 - test table
        results.append((type(info.value), str(info.value)))
    assert results[1] == results[0]


def test_uint8_index_warns_and_masks():
    x = retrograd.tensor(np.arange(3.0))
    with pytest.warns(UserWarning, match="uint8 is now deprecated"):
        out = x[retrograd.tensor(np.array([1, 0, 1], np.uint8))]
    assert out.tolist() == [0.0, 2.0]


def test_non_tuple_sequence_warns_like_torch():
    x = retrograd.tensor(np.arange(12.0).reshape(3, 4))
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        out = x[[0, slice(None)]]
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert x[[0, 2]].shape == (2, 4)  # a plain list of ints is a tensor index


# --- values and dtypes of the indexing ops --------------------------------------------------------

OP_EXPRS = [
    "x.gather(1, i)", "x.scatter(1, i, 9)", "x.scatter(1, i, s)", "x.scatter_add(1, i, s)",
    "x.index_select(0, torch.tensor([2, 0]))", "x.index_add(0, torch.tensor([1, 1]), x[:2])",
    "x.masked_fill(m, 7)", "x.masked_select(m)", "x.take(torch.tensor([0, 5, -1]))",
    "x.index_put((torch.tensor([0, 2]),), x[:2])", "x[m]", "x[:, torch.tensor([3, 0])]",
    "torch.take_along_dim(x, i, 1)",
    "x.clone().index_put_((torch.tensor([0]), torch.tensor([1])), x[0, :1], accumulate=True)",
    "x.clone().scatter_(1, i[:1], s[:1])", "x.clone().masked_fill_(m, 1)",
    "x.clone().index_add_(1, torch.tensor([0]), x[:, :1], alpha=2)",
    "x.clone().scatter_add_(1, i, s)",
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "float16"])
@pytest.mark.parametrize("expr", OP_EXPRS)
def test_indexing_op_values_and_dtypes(expr, dtype):
    if dtype == "bool" and ("index_add" in expr or "scatter_add" in expr):
        pytest.skip("torch has no bool add kernels")
    data = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    results = []
    for lib in (retrograd, torch):
        x = lib.from_numpy(data.copy())
        env = {"x": x, "torch": lib, "i": lib.tensor([[0, 3], [1, 1], [2, 0]]),
               "s": lib.from_numpy(data[:, :2].copy()), "m": lib.from_numpy(data > 2)}
        out = eval(expr, env)  # noqa: S307 - test table
        results.append((str(out.dtype).split(".")[-1], tuple(out.shape), out.stride(),
                        out.numpy().tolist()))
    assert results[0] == results[1]


def test_scatter_src_larger_than_index_has_correct_gradient():
    # torch raises "invalid gradient" here; retrograd pads src's gradient with zeros
    x = retrograd.tensor(np.random.rand(3, 4), requires_grad=True)
    src = retrograd.tensor(np.random.rand(3, 4), requires_grad=True)
    idx = retrograd.tensor([[0, 1], [2, 0]])
    assert retrograd.autograd.gradcheck(lambda a, b: a.scatter(0, idx, b), (x, src))
    assert retrograd.autograd.gradgradcheck(lambda a, b: a.scatter(0, idx, b), (x, src))


def test_advanced_index_backward_accumulates_duplicates():
    x = retrograd.tensor(np.arange(4.0), requires_grad=True)
    x[retrograd.tensor([1, 1, 3, 1])].sum().backward()
    assert x.grad.tolist() == [0.0, 3.0, 0.0, 1.0]


def test_empty_index_result_skips_bounds_checks_like_torch():
    for lib in (retrograd, torch):
        x = lib.zeros(4, 2, requires_grad=True)
        y = x[2:2, lib.tensor([5, 7])]
        assert tuple(y.shape) == (0, 2)
        y.sum().backward()
        assert x.grad.abs().sum().item() == 0


def test_inplace_index_ops_share_version_with_views():
    base = retrograd.zeros(3, 4)
    view = base[1]
    view.index_put_((retrograd.tensor([0, 2]),), retrograd.tensor([1.0, 2.0]))
    view.masked_fill_(retrograd.tensor([False, True, False, False]), 5.0)
    base[0].scatter_(0, retrograd.tensor([3]), 4.0)
    base[2].index_add_(0, retrograd.tensor([1]), retrograd.tensor([6.0]))
    assert base._version == view._version == 4
    assert base.tolist() == [[0, 0, 0, 4], [1, 5, 2, 0], [0, 6, 0, 0]]


def test_index_put_on_view_builds_copyslices():
    for lib in (retrograd, torch):
        leaf = lib.ones(3, 4, requires_grad=True)
        x = leaf * 2
        x[0].index_put_((lib.tensor([1]),), lib.tensor([5.0]))
        assert x.grad_fn.name() == "torch::autograd::CopySlices"
        x.sum().backward()
        assert leaf.grad.tolist()[0] == [2.0, 0.0, 2.0, 2.0]
