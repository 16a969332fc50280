"""Functions that use autograd transforms under retrograd.compile: reverse-mode ones (autograd.grad,
autograd.functional) are captured; forward-mode AD is refused with a clear message and runs
eagerly (with fullgraph=True: an error naming the user's line)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import retrograd
from retrograd.autograd import forward_ad as fw
from retrograd.autograd.functional import jacobian


def _x():
    return retrograd.tensor(np.linspace(-1.0, 1.0, 5), requires_grad=True)


def _forward_mode(x):
    with fw.dual_level():
        d = fw.make_dual(x, retrograd.ones_like(x))
        return fw.unpack_dual(d.sin() * x).tangent


def test_forward_mode_ad_runs_eagerly_and_says_why(caplog):
    x = _x()
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        got = retrograd.compile(_forward_mode)(x)
    np.testing.assert_allclose(got.detach().numpy(), _forward_mode(x).detach().numpy())
    assert "forward-mode AD (autograd.forward_ad.dual_level) is not captured" in caplog.text
    assert retrograd.compiler.counters["compiles"] == 1


def test_forward_mode_ad_with_fullgraph_names_the_line():
    with pytest.raises(RuntimeError) as err:
        retrograd.compile(_forward_mode, fullgraph=True)(_x())
    message = str(err.value)
    assert "cannot capture _forward_mode: forward-mode AD" in message
    assert f"{__file__}:" in message


def test_autograd_grad_with_create_graph_is_captured_and_differentiable():
    def first_derivative(x):
        return retrograd.autograd.grad((x ** 3).sum(), x, create_graph=True)[0]

    x = _x()
    y = retrograd.compile(first_derivative)(x)
    assert type(y.grad_fn).__name__ == "CompiledFunctionBackward"
    (second,) = retrograd.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(y.detach().numpy(), 3 * x.detach().numpy() ** 2)
    np.testing.assert_allclose(second.numpy(), 6 * x.detach().numpy())


def test_autograd_functional_jacobian_inside_compile():
    def jac(x):
        return jacobian(lambda y: y.sin() * y, x)

    x = _x()
    want = jac(x)
    got = retrograd.compile(jac)(x)
    np.testing.assert_allclose(got.numpy(), want.numpy())


def _per_example_norms(x):
    from retrograd.func import grad, vmap

    return vmap(grad(lambda row: (row.sin() ** 2).sum()))(x)


def test_vmap_runs_eagerly_and_says_why(caplog):
    x = retrograd.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4))
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        got = retrograd.compile(_per_example_norms)(x)
    np.testing.assert_allclose(got.numpy(), _per_example_norms(x).numpy())
    np.testing.assert_allclose(got.numpy(), np.sin(2 * x.numpy()))
    assert "vmap (retrograd.func.vmap" in caplog.text and "is not captured" in caplog.text
    with pytest.raises(RuntimeError, match="cannot capture _per_example_norms: vmap"):
        retrograd.compile(_per_example_norms, fullgraph=True)(x)


def test_func_grad_is_captured():
    from retrograd.func import grad

    def g(x):
        return grad(lambda y: (y ** 3).sum())(x)

    x = _x()
    got = retrograd.compile(g, fullgraph=True)(x.detach())
    np.testing.assert_allclose(got.numpy(), 3 * x.detach().numpy() ** 2)


def test_func_vjp_is_captured():
    from retrograd.func import vjp

    def g(x):
        out, pullback = vjp(lambda y: y.sin() * y, x)
        return pullback(retrograd.ones_like(out))[0]

    x = _x().detach()
    got = retrograd.compile(g, fullgraph=True)(x)
    a = x.numpy()
    np.testing.assert_allclose(got.numpy(), np.cos(a) * a + np.sin(a))
