"""Generated overload dispatchers (NOTE [Overloads]): selection, node names and torch's errors."""

from __future__ import annotations

import inspect
import linecache

import numpy as np
import pytest
import torch

import retrograd
from retrograd._ops import registry
from retrograd._ops.overloads import GROUPS, overloaded


def _pair(requires_grad: bool = True):
    data = np.array([1.5, -2.0, 3.0])
    return (torch.tensor(data, requires_grad=requires_grad),
            retrograd.tensor(data, requires_grad=requires_grad))


CALLS = {
    "pow scalar": lambda m, x: m.pow(x, 2),
    "pow tensor": lambda m, x: m.pow(x, x),
    "pow number base": lambda m, x: m.pow(2.0, x),
    "pow method": lambda m, x: x.pow(3),
    "operator pow": lambda m, x: x ** 2,
    "rpow": lambda m, x: 2 ** x,
    "clamp scalar": lambda m, x: m.clamp(x, min=0.0),
    "clamp tensor": lambda m, x: m.clamp(x, max=x * 0.5),
    "clamp 0-d max": lambda m, x: m.clamp(x, 0.0, m.tensor(2.0)),
    "clip method": lambda m, x: x.clip(-1.0, 1.0),
    "clamp_min": lambda m, x: m.clamp_min(x, 0.0),
    "clamp_min tensor": lambda m, x: m.clamp_min(x, x * 0.5),
    "clamp_max method": lambda m, x: x.clamp_max(x * 0.5),
    "div": lambda m, x: m.div(x, 2),
    "div rounding None": lambda m, x: m.div(x, 2, rounding_mode=None),
    "divide floor": lambda m, x: m.divide(x, x + 3, rounding_mode="floor"),
    "div method trunc": lambda m, x: x.div(x + 3, rounding_mode="trunc"),
    "remainder": lambda m, x: m.remainder(x, 1.5),
    "remainder tensor": lambda m, x: m.remainder(x, x + 4),
    "mod operator": lambda m, x: x % 2,
    "fmod": lambda m, x: m.fmod(x, 1.5),
    "fmod method tensor": lambda m, x: x.fmod(x + 4),
    "rsub": lambda m, x: m.rsub(x, 2),
    "rsub tensor alpha": lambda m, x: m.rsub(x, x, alpha=2),
    "lerp": lambda m, x: m.lerp(x, x * 2, 0.25),
    "lerp tensor": lambda m, x: x.lerp(x * 2, x * 0 + 0.25),
    "round": lambda m, x: m.round(x),
    "round decimals": lambda m, x: x.round(decimals=1),
    "sum": lambda m, x: m.sum(x),
    "sum dim None": lambda m, x: m.sum(x, None),
    "sum dim method": lambda m, x: x.sum(0, keepdim=True),
    "mean": lambda m, x: x.mean(),
    "mean dims": lambda m, x: m.mean(x, (0,)),
    "prod": lambda m, x: m.prod(x),
    "prod dim": lambda m, x: x.prod(0),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_selects_torchs_overload(name):
    call = CALLS[name]
    tx, rx = _pair()
    expected, got = call(torch, tx), call(retrograd, rx)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy())
    assert type(got.grad_fn).__name__ == type(expected.grad_fn).__name__


INPLACE = {
    "pow_": lambda x: x.pow_(2),
    "pow_ tensor": lambda x: x.pow_(x),
    "ipow": lambda x: x.__ipow__(2),
    "imod": lambda x: x.__imod__(2),
    "clamp_": lambda x: x.clamp_(max=1.0),
    "clip_ tensor": lambda x: x.clip_(x * 0 - 1, None),
    "fill_": lambda x: x.fill_(2.5),
    "fill_ tensor": lambda x: x.fill_(x.new_tensor(4.0)),
    "div_": lambda x: x.div_(2, rounding_mode="floor"),
    "divide_": lambda x: x.divide_(2),
    "round_": lambda x: x.round_(decimals=1),
    "lerp_": lambda x: x.lerp_(x * 2, 0.5),
    "remainder_": lambda x: x.remainder_(x + 4),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_methods(name):
    tx, rx = _pair(requires_grad=False)
    t0, r0 = (tx * 1).requires_grad_(), (rx * 1).requires_grad_()
    tx, rx = t0 * 1, r0 * 1
    expected, got = INPLACE[name](tx), INPLACE[name](rx)
    assert got is rx
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy())
    assert type(got.grad_fn).__name__ == type(expected.grad_fn).__name__


ERRORS = {
    "pow two strings": lambda m, x: m.pow("a", "b"),
    "pow list": lambda m, x: m.pow(x, [1, 2]),
    "pow None": lambda m, x: m.pow(x, None),
    "pow method": lambda m, x: x.pow("a"),
    "remainder str self": lambda m, x: m.remainder("a", x),
    "clamp str": lambda m, x: m.clamp(x, "a"),
    "clamp number and tensor": lambda m, x: m.clamp(x, 0.0, x * 2),
    "clamp_min list": lambda m, x: m.clamp_min(x, [1]),
    "lerp str": lambda m, x: m.lerp(x, x, "a"),
    "lerp method": lambda m, x: x.lerp(x, "a"),
    "fill_ method": lambda m, x: x.detach().fill_("a"),
    "rsub str": lambda m, x: m.rsub(x, "a"),
    "sum keepdim alone": lambda m, x: m.sum(x, keepdim=True),
    "sum method keepdim alone": lambda m, x: x.sum(keepdim=True),
    "all str": lambda m, x: m.all(x, "a"),
}


LOGICAL = {
    "all": lambda m, x: m.all(x),
    "all dim": lambda m, x: m.all(x, 0),
    "any dims": lambda m, x: m.any(x, (0, 1)),
    "any keepdim": lambda m, x: x.any(keepdim=True),
    "all dim keyword": lambda m, x: x.all(dim=1, keepdim=True),
}


@pytest.mark.parametrize("name", list(LOGICAL))
def test_all_any_overloads(name):
    data = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]])
    expected = LOGICAL[name](torch, torch.tensor(data))
    got = LOGICAL[name](retrograd, retrograd.tensor(data))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert got.shape == expected.shape


@pytest.mark.parametrize("name", list(ERRORS))
def test_invalid_combination_message(name):
    call = ERRORS[name]
    tx, rx = _pair()
    with pytest.raises(TypeError) as expected:
        call(torch, tx)
    with pytest.raises(TypeError) as got:
        call(retrograd, rx)
    assert str(got.value) == str(expected.value)


def test_dispatcher_source_is_visible():
    fn = retrograd.pow
    source = fn.__retrograd_source__
    assert source.startswith("def pow(input, exponent, *, out=None):")
    filename = fn.__code__.co_filename
    assert "".join(linecache.getlines(filename)) == source
    assert set(fn.overloads) == {"Tensor_Scalar", "Tensor_Tensor", "Scalar"}


def test_single_overload_names_get_no_dispatcher():
    # mul and add have one declaration: the public function is its entry point itself
    assert not hasattr(retrograd.mul, "overloads")
    assert retrograd.mul.opdef.name == "mul.Tensor"


def test_every_group_is_finished():
    for (method, name), group in GROUPS.items():
        if len(group.entries) > 1:
            table = registry._METHODS if method else registry._NAMESPACE
            public = table[name]
            # (a random draw's dispatcher may be wrapped to draw per vmap member)
            assert inspect.unwrap(public) is overloaded(name, method), name


def test_max_min_overloads_share_a_position_and_return_named_tuples():
    a0 = np.random.default_rng(0).standard_normal((3, 4))
    b0 = np.random.default_rng(1).standard_normal((3, 4))
    want: list = []
    for lib in (retrograd, torch):
        a = lib.tensor(a0, requires_grad=True)
        b = lib.tensor(b0)
        got = [lib.max(a).grad_fn.name(), lib.max(a, b).grad_fn.name(),
               a.min(other=b).grad_fn.name(), lib.max(a, 1).values.grad_fn.name(),
               type(a.min(dim=0)).__name__, a.max(1, True).indices.shape]
        if lib is torch:
            assert [g.replace("torch::autograd::", "") if isinstance(g, str) else g
                    for g in got] == want
        else:
            want = [g.replace("torch::autograd::", "") if isinstance(g, str) else g
                    for g in got]
            np.testing.assert_array_equal(lib.max(a, 1)[0].detach().numpy(), a0.max(1))
    for args, kwargs in (((a0,), {"keepdim": True}), ((a0, 0), {"other": b0})):
        msgs = []
        for lib in (retrograd, torch):
            conv = [lib.tensor(x) if isinstance(x, np.ndarray) else x for x in args]
            kw = {k: lib.tensor(v) for k, v in kwargs.items() if k == "other"}
            kw.update({k: v for k, v in kwargs.items() if k != "other"})
            with pytest.raises(TypeError) as e:
                lib.max(*conv, **kw)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


# --- the families converted later: var/std, ordering, where, scatter, bucketize, isin ----------

def _matrix(lib, requires_grad: bool = True):
    # no ties: torch leaves the order of equal values unspecified for topk
    data = np.array([[1.5, -2.0, 3.0, 0.5], [0.25, 4.0, -1.0, 2.0], [3.0, 2.5, -0.5, 1.0]])
    return lib.tensor(data, requires_grad=requires_grad)


def _index(lib):
    return lib.tensor([[0, 2, 1, 0], [1, 0, 2, 2]])


def _node(t) -> str | None:
    fn = t.grad_fn
    return None if fn is None else fn.name().replace("torch::autograd::", "")


def _summary(result) -> list:
    """What a call must agree on: values, dtypes, shapes, node names, the result's type name
    (a named tuple such as return_types.sort) and saved correction/dim of var's nodes."""
    items = result if isinstance(result, tuple) else (result,)
    out: list = [type(result).__name__ if isinstance(result, tuple) else "Tensor"]
    for t in items:
        out.append((t.detach().numpy().tolist(), str(t.dtype).split(".")[-1], tuple(t.shape),
                    _node(t)))
        fn = t.grad_fn
        if fn is not None and hasattr(fn, "_saved_correction"):
            out.append(fn._saved_correction)
    return out


FAMILIES = {
    # var / std / var_mean / std_mean: default (unbiased), dim, correction
    "var": lambda m, x: m.var(x),
    "var unbiased False": lambda m, x: m.var(x, False),
    "var unbiased keyword": lambda m, x: x.var(unbiased=False),
    "var dim": lambda m, x: x.var(0),
    "var dim None": lambda m, x: x.var(None),
    "var dim list unbiased keepdim": lambda m, x: m.var(x, [0, 1], False, True),
    "var dim keyword unbiased": lambda m, x: x.var(dim=1, unbiased=False),
    "var correction": lambda m, x: m.var(x, correction=2),
    "var dim correction keepdim": lambda m, x: x.var(1, correction=0, keepdim=True),
    "std": lambda m, x: x.std(),
    "std unbiased": lambda m, x: m.std(x, True),
    "std dim unbiased": lambda m, x: x.std(1, False),
    "std correction": lambda m, x: m.std(x, 0, correction=0),
    "var_mean": lambda m, x: m.var_mean(x),
    "var_mean dim": lambda m, x: m.var_mean(x, 0),
    "var_mean unbiased": lambda m, x: m.var_mean(x, False),
    "std_mean dim keepdim": lambda m, x: m.std_mean(x, 1, keepdim=True),
    "std_mean correction": lambda m, x: m.std_mean(x, correction=0),
    # sort, argsort, topk, kthvalue, msort
    "sort": lambda m, x: m.sort(x),
    "sort dim descending": lambda m, x: m.sort(x, 0, True),
    "sort stable": lambda m, x: m.sort(x, stable=True),
    "sort stable dim keywords": lambda m, x: x.sort(stable=True, dim=0, descending=True),
    "sort stable None": lambda m, x: x.sort(stable=None),
    "sort method dim": lambda m, x: x.sort(dim=0),
    "argsort": lambda m, x: m.argsort(x),
    "argsort dim descending": lambda m, x: x.argsort(0, True),
    "argsort stable": lambda m, x: m.argsort(x, stable=True, descending=True),
    "topk": lambda m, x: m.topk(x, 2),
    "topk method": lambda m, x: x.topk(2, 0, False),
    "kthvalue": lambda m, x: m.kthvalue(x, 2),
    "kthvalue method keepdim": lambda m, x: x.kthvalue(1, 0, True),
    "msort": lambda m, x: m.msort(x),
    # where: self, ScalarSelf, ScalarOther, Scalar, condition alone; the method
    "where": lambda m, x: m.where(x > 0, x, x * 2),
    "where ScalarSelf": lambda m, x: m.where(x > 0, 1.5, x),
    "where ScalarOther": lambda m, x: m.where(x > 0, x, 0),
    "where Scalar": lambda m, x: m.where(x > 0, 1.0, 0.0),
    "where Scalar ints": lambda m, x: m.where(x > 0, 1, 0),
    "where keywords": lambda m, x: m.where(condition=x > 0, input=x, other=x + 1),
    "where condition": lambda m, x: m.where(x > 1),
    "where method": lambda m, x: x.where(x > 0, x * 3),
    "where method number": lambda m, x: x.where(x > 0, 2.0),
    # scatter: src, value, reduce, value_reduce
    "scatter src": lambda m, x: m.scatter(x, 0, _index(m), x * 2),
    "scatter value": lambda m, x: m.scatter(x, 1, _index(m), 1.5),
    "scatter value keyword": lambda m, x: m.scatter(x, 0, _index(m), value=-1.0),
    "scatter src keyword": lambda m, x: x.scatter(0, _index(m), src=x * 3),
    "scatter reduce": lambda m, x: m.scatter(x.detach(), 0, _index(m), x.detach(),
                                             reduce="add"),
    "scatter value_reduce": lambda m, x: x.detach().scatter(0, _index(m), 2.0,
                                                             reduce="multiply"),
    # bucketize / searchsorted: Tensor and Scalar
    "bucketize": lambda m, x: m.bucketize(x.detach(), m.tensor([0.0, 1.0, 3.0])),
    "bucketize scalar": lambda m, x: m.bucketize(1.0, m.tensor([0.0, 1.0, 3.0]), right=True),
    "searchsorted": lambda m, x: m.searchsorted(m.tensor([0.0, 1.0, 3.0]), x.detach()),
    "searchsorted scalar": lambda m, x: m.searchsorted(m.tensor([0.0, 1.0, 3.0]), 2,
                                                       out_int32=True),
    # isin: Tensor_Tensor, Tensor_Scalar, Scalar_Tensor
    "isin": lambda m, x: m.isin(x.detach(), m.tensor([3.0, 0.5])),
    "isin scalar test": lambda m, x: m.isin(x.detach(), 3.0, invert=True),
    "isin scalar element": lambda m, x: m.isin(3, m.tensor([1, 3])),
    # narrow: int start, Tensor start (both composites of slice)
    "narrow": lambda m, x: m.narrow(x, 1, 1, 2),
    "narrow method negative start": lambda m, x: x.narrow(0, -2, 2),
    "narrow tensor start": lambda m, x: m.narrow(x, 1, m.tensor(2), 2),
    "narrow method tensor start and length": lambda m, x: x.narrow(0, m.tensor(1), m.tensor(2)),
    "narrow keywords": lambda m, x: m.narrow(x, dim=1, start=m.tensor(0), length=3),
    # movedim / moveaxis: int, intlist (composites of permute)
    "movedim": lambda m, x: m.movedim(x, 0, 1),
    "movedim method lists": lambda m, x: x.movedim([0, 1], [1, 0]),
    "movedim keywords": lambda m, x: m.movedim(x, source=(1,), destination=(0,)),
    "moveaxis": lambda m, x: m.moveaxis(x, 1, 0),
    "moveaxis method tuples": lambda m, x: x.moveaxis((0,), (1,)),
    # split: an int (SplitBackward0) or a list of sizes (SplitWithSizesBackward0)
    "split": lambda m, x: m.split(x, 2, 1),
    "split method sizes": lambda m, x: x.split([1, 2]),
    "split tuple keyword": lambda m, x: m.split(x, split_size_or_sections=(3, 1), dim=1),
    "split method tensor size": lambda m, x: x.split(m.tensor(2), dim=1),
    "split_with_sizes": lambda m, x: m.split_with_sizes(x, [2, 1]),
}


@pytest.mark.parametrize("name", list(FAMILIES))
def test_family_overloads_match_torch(name):
    call = FAMILIES[name]
    expected = call(torch, _matrix(torch))
    got = call(retrograd, _matrix(retrograd))
    want, have = _summary(expected), _summary(got)
    if isinstance(expected, tuple) and hasattr(expected, "values"):
        assert type(got).__module__ == "retrograd._ops.reduction"
        assert type(got).__qualname__ == f"return_types.{type(expected).__name__}"
    for w, h in zip(want, have):
        if isinstance(w, tuple):
            np.testing.assert_allclose(np.array(h[0], dtype=float), np.array(w[0], dtype=float))
            assert h[1:] == w[1:], name
        else:
            assert h == w, name
    assert len(want) == len(have)


FAMILY_INPLACE = {
    "scatter_": lambda m, x: x.scatter_(0, _index(m), x * 0 + 7),
    "scatter_ value": lambda m, x: x.scatter_(1, _index(m), 2.5),
    "scatter_ reduce": lambda m, x: x.scatter_(0, _index(m), x * 0 + 2, reduce="multiply"),
    "scatter_ value_reduce": lambda m, x: x.scatter_(1, _index(m), 1.0, reduce="add"),
}


@pytest.mark.parametrize("name", list(FAMILY_INPLACE))
def test_family_inplace_methods(name):
    results = []
    for lib in (torch, retrograd):
        leaf = _matrix(lib)
        x = leaf * 1
        got = FAMILY_INPLACE[name](lib, x)
        assert got is x
        results.append((got.detach().numpy(), _node(got)))
    np.testing.assert_allclose(results[1][0], results[0][0])
    assert results[1][1] == results[0][1]


def test_sort_topk_kthvalue_out_give_named_out_tuples():
    for name, call in (("sort", lambda m, x, out: m.sort(x, 1, out=out)),
                       ("sort", lambda m, x, out: m.sort(x, stable=True, out=out)),
                       ("topk", lambda m, x, out: m.topk(x, 2, out=out)),
                       ("kthvalue", lambda m, x, out: m.kthvalue(x, 2, 0, out=out))):
        got = []
        for lib in (torch, retrograd):
            out = (lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.long))
            r = call(lib, _matrix(lib, requires_grad=False), out)
            assert r[0] is out[0] and r[1] is out[1]
            got.append((type(r).__name__, r.values.numpy(), r.indices.numpy()))
        assert got[1][0] == got[0][0] == f"{name}_out"
        np.testing.assert_array_equal(got[1][1], got[0][1])
        np.testing.assert_array_equal(got[1][2], got[0][2])


def test_scatter_reduce_forms_have_no_derivative():
    for lib in (torch, retrograd):
        y = lib.scatter(_matrix(lib), 0, _index(lib), 2.0, reduce="add")
        assert _node(y) == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
            y.sum().backward()


FAMILY_ERRORS = {
    "var str": lambda m, x: m.var(x, "a"),
    "var float": lambda m, x: m.var(x, 1.5),
    "var unbiased and correction": lambda m, x: x.var(unbiased=True, correction=0),
    "var three keywords": lambda m, x: m.var(x, unbiased=True, keepdim=True, correction=0),
    "var dim unbiased correction": lambda m, x: x.var(0, True, correction=0),
    "std_mean str": lambda m, x: m.std_mean(x, "a"),
    "var_mean float": lambda m, x: m.var_mean(x, 0.5),
    "where str": lambda m, x: m.where(x > 0, "a", x),
    "where method str": lambda m, x: x.where(x > 0, "a"),
    "scatter_ str": lambda m, x: x.detach().scatter_(0, _index(m), "a"),
    "bucketize str": lambda m, x: m.bucketize("a", x),
    "searchsorted str": lambda m, x: m.searchsorted(x, "a"),
    "isin two numbers": lambda m, x: m.isin(1, 2),
    "narrow float start": lambda m, x: m.narrow(x, 0, 1.0, 2),
    "narrow method bool start": lambda m, x: x.narrow(0, True, 2),
    "movedim float": lambda m, x: m.movedim(x, 0.0, 1),
    "movedim method bool": lambda m, x: x.movedim(True, 1),
    "moveaxis str": lambda m, x: m.moveaxis(x, "a", 1),
    "split float": lambda m, x: m.split(x, 2.0),
    "split method None": lambda m, x: x.split(None),
    "split float first size": lambda m, x: x.split((1.0, 2)),
    "split str later size": lambda m, x: m.split(x, [1, 1, "a"]),
    "split sizes tensor": lambda m, x: x.split(m.tensor([2, 1])),
}


@pytest.mark.parametrize("name", list(FAMILY_ERRORS))
def test_family_invalid_combination_message(name):
    call = FAMILY_ERRORS[name]
    with pytest.raises(TypeError) as expected:
        call(torch, _matrix(torch))
    with pytest.raises(TypeError) as got:
        call(retrograd, _matrix(retrograd))
    assert str(got.value) == str(expected.value)


def test_bool_int_and_int_list_are_told_apart():
    # std's position 1 is `unbiased: bool` in one overload and `dim: int[1]?` in the others
    for lib in (torch, retrograd):
        x = _matrix(lib, requires_grad=False)
        assert tuple(x.std(0).shape) == (4,)
        assert tuple(x.std([0]).shape) == (4,)
        assert tuple(x.std(True).shape) == ()
    x = _matrix(retrograd, requires_grad=False)
    np.testing.assert_allclose(x.std(False).numpy(), x.numpy().std())


def test_narrow_tensor_start_must_be_an_integral_scalar():
    for start in (lambda m: m.tensor(1.0), lambda m: m.tensor([1]), lambda m: m.tensor(True)):
        for lib in (torch, retrograd):
            x = _matrix(lib)
            with pytest.raises(RuntimeError, match="start must be an 0-dim integral Tensor"):
                x.narrow(0, start(lib), 1)


def test_an_unsized_int_list_takes_no_bare_int():
    # movedim.intlist's `int[]` (unlike std's `int[1]`) wants a list: an int and a list mix
    for lib in (torch, retrograd):
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            _matrix(lib).movedim(0, [1])


# --- bound overloads: conv (int list or str padding) and the random factories ------------------

def _conv_inputs(lib):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((1, 2, 6, 6)), requires_grad=True)
    w = lib.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    return x, w


CONV = {
    "int padding": lambda m, x, w: m.conv2d(x, w, None, 1, 1),
    "padding list keyword": lambda m, x, w: m.conv2d(x, w, padding=[1, 0], stride=(1, 2)),
    "padding same": lambda m, x, w: m.conv2d(x, w, padding="same"),
    "padding valid positional": lambda m, x, w: m.conv2d(x, w, None, 1, "valid", 1, 1),
    "same dilation": lambda m, x, w: m.conv2d(x, w, bias=None, padding="same", dilation=2),
    "functional same": lambda m, x, w: m.nn.functional.conv2d(
        x, w, m.ones(3, dtype=m.float64), padding="same"),
    "conv1d same": lambda m, x, w: m.conv1d(x[:, :, 0], w[:, :, 0], padding="same"),
    "conv3d valid": lambda m, x, w: m.conv3d(x[:, :, None], w[:, :, None], padding="valid"),
    "unbatched": lambda m, x, w: m.conv2d(x[0], w, padding="same"),
    "keywords only": lambda m, x, w: m.conv2d(input=x, weight=w, groups=1, padding=2),
}


@pytest.mark.parametrize("name", list(CONV))
def test_conv_overloads_match_torch(name):
    results = []
    for lib in (torch, retrograd):
        x, w = _conv_inputs(lib)
        y = CONV[name](lib, x, w)
        y.sum().backward()
        results.append((y.detach().numpy(), _node(y), x.grad.numpy(), w.grad.numpy()))
    (ty, tnode, tgx, tgw), (ry, rnode, rgx, rgw) = results
    assert rnode == tnode
    np.testing.assert_allclose(ry, ty, rtol=1e-10)
    np.testing.assert_allclose(rgx, tgx, rtol=1e-10)
    np.testing.assert_allclose(rgw, tgw, rtol=1e-10)


def _spy_on(monkeypatch, name: str, method: bool = False) -> list:
    """Replace each overload of `name` by a recorder of (overload, arguments)."""
    seen: list = []
    group = GROUPS[(method, name)]
    spies = []
    for opdef, _ in group.entries:
        def spy(*args, _name=opdef.name, **kwargs):
            seen.append((_name, args[1 if method else 0:], kwargs))

        spies.append((opdef, spy))
    monkeypatch.setattr(group, "entries", spies)
    return seen


def test_each_bound_overload_gets_its_arguments(monkeypatch):
    x = retrograd.ones(1, 1, 4, 4)
    g = retrograd.Generator()
    seen = _spy_on(monkeypatch, "conv2d")
    retrograd.conv2d(x, x, padding="same", dilation=2)
    retrograd.conv2d(x, x, None, (2, 1))
    retrograd.nn.functional.conv2d(x, x, groups=3, padding=[1, 2])
    assert [(n, a[2:], k) for n, a, k in seen] == [
        ("conv2d.padding", (None, 1, "same", 2, 1), {}),
        ("conv2d", (None, (2, 1), 0, 1, 1), {}),
        ("conv2d", (None, 1, [1, 2], 1, 3), {})]
    seen = _spy_on(monkeypatch, "randint")
    retrograd.randint(5, (2,))
    retrograd.randint(1, 5, [2], generator=g, dtype=retrograd.int8)
    retrograd.randint(high=5, size=(3,), low=4, requires_grad=False)
    retrograd.randint(5, (2,), generator=None, out=x)
    # keyword-only arguments not given are left to the overload's function
    assert seen == [
        ("randint", (5, (2,)), {}),
        ("randint.low_generator", (1, 5, [2]), {"generator": g, "dtype": retrograd.int8}),
        ("randint.low", (4, 5, (3,)), {"requires_grad": False}),
        ("randint.generator", (5, (2,)), {"generator": None, "out": x})]
    seen = _spy_on(monkeypatch, "normal")
    retrograd.normal(x, 2)
    retrograd.normal(1.0, x, generator=g)
    retrograd.normal(x, x)
    retrograd.normal(0, 1, [3], dtype=retrograd.float64)
    assert [(n, len(a), k) for n, a, k in seen] == [
        ("normal.Tensor_float", 2, {}), ("normal.float_Tensor", 2, {"generator": g}),
        ("normal.Tensor_Tensor", 2, {}), ("normal.float_float", 3, {"dtype": retrograd.float64})]
    seen = _spy_on(monkeypatch, "bernoulli", method=True)
    x.bernoulli(0.5)
    x.bernoulli(generator=g)
    assert seen == [("bernoulli.p", (0.5,), {}), ("bernoulli", (), {"generator": g})]


def test_aten_conv_overloads_run_their_composites():
    x, w = _conv_inputs(retrograd)
    tx, tw = _conv_inputs(torch)
    got = retrograd.ops.aten.conv2d.padding(x, w, None, [1, 1], "same")
    want = torch.ops.aten.conv2d.padding(tx, tw, None, [1, 1], "same")
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10)
    assert str(retrograd.ops.aten.conv3d.padding) == "aten.conv3d.padding"
    for name in ("conv1d", "conv2d", "conv3d", "randint", "normal", "bernoulli"):
        assert set(getattr(retrograd.ops.aten, name).overloads()) <= set(
            getattr(torch.ops.aten, name).overloads()), name
    assert retrograd.ops.aten.conv2d.overloads() == ["default", "padding"]
    assert set(retrograd.ops.aten.randint.overloads()) == {"default", "generator", "low",
                                                           "low_generator"}


def _draw_summary(t) -> tuple:
    return tuple(t.shape), str(t.dtype).split(".")[-1], t.requires_grad, _node(t)


RANDOM = {
    "randint high size": lambda m, g: m.randint(5, (3,)),
    "randint low high size": lambda m, g: m.randint(2, 5, (2, 2)),
    "randint keywords": lambda m, g: m.randint(high=5, size=(3,)),
    "randint low keyword": lambda m, g: m.randint(high=5, size=(3,), low=4),
    "randint size keyword": lambda m, g: m.randint(3, size=[2]),
    "randint generator": lambda m, g: m.randint(5, (3,), generator=g),
    "randint low generator": lambda m, g: m.randint(4, 5, (3,), generator=g, dtype=m.int8),
    "randint generator None": lambda m, g: m.randint(5, (3,), generator=None),
    "randint 0-d tensor bound": lambda m, g: m.randint(m.tensor(4), m.tensor(5), (2,)),
    "randint float dtype": lambda m, g: m.randint(3, (2,), dtype=m.float64),
    "normal tensor tensor": lambda m, g: m.normal(m.zeros(2, 1), m.ones(3), generator=g),
    "normal tensor float": lambda m, g: m.normal(m.zeros(3, requires_grad=True), 2),
    "normal tensor default std": lambda m, g: m.normal(mean=m.zeros(3)),
    "normal float tensor": lambda m, g: m.normal(1.0, m.ones(2, requires_grad=True)),
    "normal float float": lambda m, g: m.normal(0, 1, (2, 3), generator=g),
    "normal factory keywords": lambda m, g: m.normal(0.0, 1.0, size=[2], dtype=m.float64,
                                                     requires_grad=True),
    "normal 0-d tensor std": lambda m, g: m.normal(0.0, m.tensor(1.0), (2,)),
    "bernoulli": lambda m, g: m.bernoulli(m.full((3,), 0.5, requires_grad=True)),
    "bernoulli p": lambda m, g: m.bernoulli(m.zeros(3), 0.5, generator=g),
    "bernoulli p keyword": lambda m, g: m.bernoulli(m.zeros(3), p=1),
    "bernoulli 0-d tensor p": lambda m, g: m.bernoulli(m.zeros(3), m.tensor(0.5)),
    "bernoulli method": lambda m, g: m.full((2,), 0.5).bernoulli(generator=g),
    "bernoulli method p": lambda m, g: m.zeros(2, dtype=m.float64).bernoulli(0.25),
    "bernoulli_ float": lambda m, g: m.zeros(2).bernoulli_(0.5),
    "bernoulli_ default": lambda m, g: m.zeros(2).bernoulli_(generator=g),
    "bernoulli_ tensor": lambda m, g: m.zeros(2, 2).bernoulli_(m.full((2,), 0.5)),
}


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_overloads_match_torch(name):
    got = []
    for lib in (torch, retrograd):
        got.append(_draw_summary(RANDOM[name](lib, lib.Generator().manual_seed(0))))
    assert got[1] == got[0]


def test_random_overloads_use_the_generator_and_out():
    for call in (lambda m, g: m.randint(0, 100, (5,), generator=g),
                 lambda m, g: m.normal(0.0, 1.0, (5,), generator=g),
                 lambda m, g: m.normal(m.zeros(5), 1.0, generator=g),
                 lambda m, g: m.bernoulli(m.full((5,), 0.5), generator=g)):
        a = call(retrograd, retrograd.Generator().manual_seed(3))
        b = call(retrograd, retrograd.Generator().manual_seed(3))
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    out = retrograd.empty(3, dtype=retrograd.float64)
    assert retrograd.normal(0.0, 1.0, (3,), out=out) is out
    out = retrograd.empty(2, dtype=retrograd.int64)
    assert retrograd.randint(1, 2, (2,), out=out) is out and out.tolist() == [1, 1]
    out = retrograd.empty(2)
    assert retrograd.bernoulli(retrograd.ones(2), out=out) is out and out.tolist() == [1, 1]


BOUND_ERRORS = {
    # conv: a wrong type anywhere, by position or keyword; too many; unknown or missing
    "conv padding float": lambda m, x: m.conv2d(x, x, padding=1.5),
    "conv groups float": lambda m, x: m.conv2d(x, x, groups=1.5),
    "conv str input": lambda m, x: m.conv2d("a", x),
    "conv bias str keyword": lambda m, x: m.conv2d(x, x, bias="a"),
    "conv stride str": lambda m, x: m.conv3d(x, x, stride="a"),
    "conv padding None": lambda m, x: m.conv1d(x, x, padding=None),
    "conv too many": lambda m, x: m.conv2d(x, x, None, 1, 0, 1, 1, 5),
    "conv unknown keyword": lambda m, x: m.conv2d(x, x, foo=1),
    "conv missing weight": lambda m, x: m.conv2d(x),
    # normal
    "normal no arguments": lambda m, x: m.normal(),
    "normal two floats": lambda m, x: m.normal(1.0, 2.0),
    "normal int size": lambda m, x: m.normal(0.0, 1.0, 3),
    "normal str mean": lambda m, x: m.normal("a", 1.0, (2,)),
    "normal generator str": lambda m, x: m.normal(x, 1.0, generator="a"),
    "normal one float": lambda m, x: m.normal(1.0),
    "normal size with tensor": lambda m, x: m.normal(x, 1.0, (3,)),
    "normal dtype with tensor": lambda m, x: m.normal(x, 1.0, dtype=m.float64),
    "normal requires_grad with tensor": lambda m, x: m.normal(x, 1.0, requires_grad=True),
    "normal std keyword only": lambda m, x: m.normal(std=1.0),
    # randint
    "randint no arguments": lambda m, x: m.randint(),
    "randint high alone": lambda m, x: m.randint(5),
    "randint float high": lambda m, x: m.randint(1.5, (2,)),
    "randint int size": lambda m, x: m.randint(5, 3),
    "randint int size keyword": lambda m, x: m.randint(5, size=3),
    "randint four arguments": lambda m, x: m.randint(0, 2, (2,), 3),
    "randint unknown keyword": lambda m, x: m.randint(5, (2,), foo=3),
    "randint float low": lambda m, x: m.randint(1.5, 5, (2,)),
    "randint generator str": lambda m, x: m.randint(5, (2,), generator="a"),
    "randint dtype str": lambda m, x: m.randint(5, (2,), dtype="a"),
    "randint float in size": lambda m, x: m.randint(5, (2.0,)),
    "randint bool high": lambda m, x: m.randint(True, (2,)),
    "randint None high": lambda m, x: m.randint(None, (2,)),
    "randint high keyword alone": lambda m, x: m.randint(high=5),
    # bernoulli, bernoulli_
    "bernoulli str p": lambda m, x: m.bernoulli(x, "a"),
    "bernoulli method str p": lambda m, x: x.bernoulli("a"),
    "bernoulli tensor p": lambda m, x: m.bernoulli(x, x),
    "bernoulli p with out": lambda m, x: m.bernoulli(x, 0.5, out=m.empty(3)),
    "bernoulli generator str": lambda m, x: m.bernoulli(x, generator="a"),
    "bernoulli None p": lambda m, x: m.bernoulli(x, None),
    "bernoulli str input": lambda m, x: m.bernoulli("a"),
    "bernoulli no input": lambda m, x: m.bernoulli(generator=None),
    "bernoulli_ str": lambda m, x: x.detach().bernoulli_("a"),
}


@pytest.mark.parametrize("name", list(BOUND_ERRORS))
def test_bound_overloads_raise_torchs_error(name):
    call = BOUND_ERRORS[name]
    with pytest.raises(TypeError) as expected:
        call(torch, torch.full((3,), 0.5))
    with pytest.raises(TypeError) as got:
        call(retrograd, retrograd.full((3,), 0.5))
    assert str(got.value) == str(expected.value)


def test_bound_overloads_keep_torchs_runtime_errors():
    for call, message in (
            (lambda m, x, w: m.conv2d(x, w, padding="foo"), "Invalid padding string: 'foo'"),
            (lambda m, x, w: m.conv2d(x, w, None, 2, "same"),
             "padding='same' is not supported for strided convolutions"),
            (lambda m, x, w: m.randint(0, 2**63, (2,)), "Overflow when unpacking long long")):
        for lib in (torch, retrograd):
            x, w = _conv_inputs(lib)
            with pytest.raises((RuntimeError, ValueError), match=message):
                call(lib, x, w)


def test_same_padding_warning_points_at_the_caller():
    import warnings

    x, w = retrograd.ones(1, 1, 5, 5), retrograd.ones(1, 1, 2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        retrograd.conv2d(x, w, padding="same")
    assert len(caught) == 1 and caught[0].filename == __file__
