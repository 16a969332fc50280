"""Functions that use autograd transforms under retrograd.compile: reverse-mode ones (autograd.grad,
autograd.functional, func.grad, func.vjp) and forward-mode AD (dual levels, func.jvp) are
captured; vmap is refused with a clear message and runs eagerly (with fullgraph=True: an error
naming the user's line)."""

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


def _compiled_equals_eager(fn, *args, rtol: float = 1e-12) -> tuple:
    """Run fn compiled (fullgraph: captured whole, or an error) and eagerly; compare."""
    got = retrograd.compile(fn, fullgraph=True)(*args)
    want = fn(*args)
    got, want = (g if isinstance(g, tuple) else (g,) for g in (got, want))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=rtol)
    return got


def test_forward_mode_ad_is_captured():
    x = _x()
    (tangent,) = _compiled_equals_eager(_forward_mode, x)
    a = x.detach().numpy()
    np.testing.assert_allclose(tangent.detach().numpy(), np.cos(a) * a)  # x has no tangent
    assert retrograd.compiler.counters["compiles"] == 1
    (source,) = [s for s, _ in retrograd._compiler.cache.MEMORY.values()]
    assert "_cos(" in source  # the tangent's ops are in the generated code


def test_func_jvp_and_its_reverse_derivative_are_captured():
    from retrograd.func import jvp

    def f(a):
        return (a.sin() * 0.9 + 0.1).tanh().exp()

    def g(x, v):
        p, t = jvp(f, (x,), (v,))
        return (t * t).sum() + p.sum()

    rng = np.random.default_rng(0)
    v = retrograd.tensor(rng.standard_normal(5))
    eager_x, compiled_x = _x(), _x()
    want, got = g(eager_x, v), retrograd.compile(g, fullgraph=True)(compiled_x, v)
    assert type(got.grad_fn).__name__ == "CompiledFunctionBackward"
    want.backward()
    got.backward()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    np.testing.assert_allclose(compiled_x.grad.numpy(), eager_x.grad.numpy(), rtol=1e-10)


def test_jvp_of_grad_and_of_in_place_view_writes_are_captured():
    from retrograd.func import grad, jvp

    def jvp_of_grad(x, v):
        return jvp(grad(lambda a: (a.sin() * a).sum()), (x,), (v,))

    def view_write(x, v):
        return jvp(lambda a: a.clone()[1:].mul_(a[:-1]).exp(), (x,), (v,))

    x = _x().detach()
    v = retrograd.tensor(np.linspace(0.5, 1.5, 5))
    _compiled_equals_eager(jvp_of_grad, x, v)
    _compiled_equals_eager(view_write, x, v)


def test_a_compiled_function_called_inside_a_dual_level_runs_eagerly():
    # its graph knows nothing of the caller's tangents: eager carries them
    def f(x):
        return x.sin() * x

    compiled = retrograd.compile(f)
    x = _x().detach()
    compiled(x)  # compiled once, outside any level
    with fw.dual_level():
        d = fw.make_dual(x, retrograd.ones_like(x))
        tangent = fw.unpack_dual(compiled(d)).tangent
    a = x.numpy()
    np.testing.assert_allclose(tangent.numpy(), np.cos(a) * a + np.sin(a))


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
