"""Generated overload dispatchers (NOTE [Overloads]): selection, node names and torch's errors."""

from __future__ import annotations

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
            assert table[name] is overloaded(name, method), name


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
