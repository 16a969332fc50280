"""autograd.functional against torch's on the same programs: values, result structures (Tensor
vs tuple, nesting), dtypes, and whether results carry a graph under create_graph."""

from __future__ import annotations

import pytest

from tests.parity.harness import both, error_of


def _describe(lib, x):
    """Results with every tensor paired with its requires_grad and whether it has a grad_fn."""
    if isinstance(x, lib.Tensor):
        return (x, x.requires_grad, x.grad_fn is not None)
    if isinstance(x, tuple):
        return tuple(_describe(lib, v) for v in x)
    return x


def _inputs(lib, dtype_name: str, requires_grad: bool = False):
    dt = getattr(lib, dtype_name)
    x = lib.tensor([0.5, -1.0, 2.0], dtype=dt, requires_grad=requires_grad)
    y = lib.tensor([[1.5, -0.5], [0.25, 1.0]], dtype=dt, requires_grad=requires_grad)
    return x, y


def _single(lib, a):
    return (a ** 2).sin() * 3


def _multi(lib, a, b):
    return ((a[:2] ** 2) @ b, a.sum() * b.exp().sum())


def _scalar(lib, a, b):
    return (a.sin() * (b @ b).sum()).sum() + (a[:2] @ b.exp()).pow(2).sum()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("strict", [False, True])
def test_vjp_jvp(dtype, create_graph, strict):
    def prog(lib):
        x, y = _inputs(lib, dtype)
        F = lib.autograd.functional
        ones = lib.ones(3, dtype=getattr(lib, dtype))
        v2 = (lib.ones(2, dtype=x.dtype), lib.tensor(2.0, dtype=x.dtype))
        kw = dict(create_graph=create_graph, strict=strict)
        return _describe(lib, (
            error_of(F.vjp, lambda a: _single(lib, a), x, ones, **kw),
            error_of(F.vjp, lambda a: _single(lib, a).sum(), x, **kw),
            error_of(F.vjp, lambda a, b: _multi(lib, a, b), (x, y), v2, **kw),
            error_of(F.vjp, lambda a: (_single(lib, a),), (x,), (ones,), **kw),
            error_of(F.jvp, lambda a: _single(lib, a), x, ones, **kw),
            error_of(F.jvp, lambda a: a * 3, lib.tensor(2.0, dtype=x.dtype), **kw),
            error_of(F.jvp, lambda a, b: _multi(lib, a, b), (x, y), (ones, y), **kw),
        ))

    both(prog, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian(dtype, create_graph, vectorize):
    def prog(lib):
        x, y = _inputs(lib, dtype)
        F = lib.autograd.functional
        kw = dict(create_graph=create_graph, vectorize=vectorize)
        return _describe(lib, (
            error_of(F.jacobian, lambda a: _single(lib, a), x, **kw),
            error_of(F.jacobian, lambda a: _single(lib, a), (x,), **kw),
            error_of(F.jacobian, lambda a, b: _multi(lib, a, b), (x, y), **kw),
            error_of(F.jacobian, lambda a, b: _multi(lib, a, b)[0], (x, y), **kw),
            error_of(F.jacobian, lambda a: (a.sum(), a * 2), x, **kw),
            # an output independent of an input, and one that needs no grad at all
            error_of(F.jacobian, lambda a, b: (a * 2, lib.zeros(2)), (x, y), **kw),
            error_of(F.jacobian, lambda a: a.sum(), lib.tensor(3.0, dtype=x.dtype), **kw),
        ))

    both(prog, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian(dtype, create_graph, vectorize):
    def prog(lib):
        x, y = _inputs(lib, dtype)
        F = lib.autograd.functional
        kw = dict(create_graph=create_graph, vectorize=vectorize)
        return _describe(lib, (
            error_of(F.hessian, lambda a, b: _scalar(lib, a, b), (x, y), **kw),
            error_of(F.hessian, lambda a: _scalar(lib, a, y), x, **kw),
            error_of(F.hessian, lambda a: (a ** 3).sum(), (x,), **kw),
            error_of(F.hessian, lambda a, b: (a ** 3).sum() + b.sum(), (x, y), **kw),
        ))

    both(prog, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("strict", [False, True])
def test_vhp_hvp(dtype, create_graph, strict):
    def prog(lib):
        x, y = _inputs(lib, dtype)
        F = lib.autograd.functional
        kw = dict(create_graph=create_graph, strict=strict)
        out = []
        for fn in (F.vhp, F.hvp):
            out += [
                error_of(fn, lambda a, b: _scalar(lib, a, b), (x, y), (x, y), **kw),
                error_of(fn, lambda a: _scalar(lib, a, y), x, x * 2, **kw),
                error_of(fn, lambda a: (a ** 3).sum(), (x,), (x,), **kw),
                error_of(fn, lambda a: a ** 3, lib.tensor(1.5, dtype=x.dtype), **kw),
            ]
        return _describe(lib, tuple(out))

    both(prog, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["vjp", "jvp", "vhp", "hvp"])
def test_results_stay_connected_to_inputs_that_require_grad(name):
    """create_graph=True: the results can be differentiated with respect to the inputs."""
    def prog(lib):
        x, y = _inputs(lib, "float64", requires_grad=True)
        fn = getattr(lib.autograd.functional, name)
        v = None if name == "vjp" else (x, y)  # vjp's v is like the (scalar) output
        out, res = fn(lambda a, b: _scalar(lib, a, b), (x, y), v, create_graph=True)
        parts = res if isinstance(res, tuple) else (res,)
        total = out.sum() + sum(r.pow(2).sum() for r in parts)
        return _describe(lib, (out, res, lib.autograd.grad(total, (x, y))))

    both(prog, rtol=1e-7, atol=1e-7)


def test_jacobian_and_hessian_connected_to_inputs():
    def prog(lib):
        x, y = _inputs(lib, "float64", requires_grad=True)
        F = lib.autograd.functional
        jac = F.jacobian(lambda a, b: _multi(lib, a, b), (x, y), create_graph=True)
        hes = F.hessian(lambda a, b: _scalar(lib, a, b), (x, y), create_graph=True,
                        vectorize=True)
        total = sum(j.sum() for row in jac for j in row) + sum(h.sum() for row in hes for h in row)
        return _describe(lib, (jac, hes, lib.autograd.grad(total, (x, y))))

    both(prog, rtol=1e-7, atol=1e-7)


def test_without_create_graph_results_have_no_graph_under_no_grad():
    def prog(lib):
        x, y = _inputs(lib, "float64", requires_grad=True)
        F = lib.autograd.functional
        with lib.no_grad():
            a = F.vjp(lambda a, b: _multi(lib, a, b)[1], (x, y))
            b = F.hvp(lambda a, b: _scalar(lib, a, b), (x, y), (x, y))
            c = F.jacobian(lambda a: a ** 2, x)
        return _describe(lib, (a, b, c))

    both(prog)


def test_inputs_are_not_modified_and_get_no_grad():
    def prog(lib):
        x, y = _inputs(lib, "float64", requires_grad=True)
        F = lib.autograd.functional
        F.vjp(lambda a, b: _multi(lib, a, b)[1], (x, y))
        F.hessian(lambda a, b: _scalar(lib, a, b), (x, y))
        return _describe(lib, (x, y, x.grad, y.grad))

    both(prog)


def test_construct_standard_basis_for():
    def prog(lib):
        F = lib.autograd.functional
        ts = (lib.zeros(2, dtype=lib.float64), lib.zeros(3, 1), lib.zeros(()))
        return F._construct_standard_basis_for(ts, tuple(t.numel() for t in ts))

    both(prog)
