"""grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd and hessian against torch.func on
the same programs, alone and composed, with torch's errors."""

from __future__ import annotations

import pytest

from tests.func._parity import arr, errors_alike, parity


def f_scalar(lib, x):
    return (x.sin() * x.exp()).sum() + (x * x).mean()


def f_vec(lib, x, w):
    return lib.tanh(x @ w.t()) * x.sum()


CASES = {
    "grad": lambda lib, x, w: lib.func.grad(lambda a: f_scalar(lib, a))(x),
    "grad_argnums": lambda lib, x, w: lib.func.grad(
        lambda a, b: f_vec(lib, a, b).sum(), argnums=(0, 1))(x, w),
    "grad_negative_argnum": lambda lib, x, w: lib.func.grad(
        lambda a, b: f_vec(lib, a, b).sum(), argnums=-1)(x, w),
    "grad_has_aux": lambda lib, x, w: lib.func.grad(
        lambda a: (f_scalar(lib, a), {"m": a.mean(), "s": (a.std(),)}), has_aux=True)(x),
    "grad_and_value": lambda lib, x, w: lib.func.grad_and_value(
        lambda a, b: f_vec(lib, a, b).sum(), argnums=(1,))(x, w),
    "grad_and_value_aux": lambda lib, x, w: lib.func.grad_and_value(
        lambda a: (f_scalar(lib, a), a * 2), has_aux=True)(x),
    "grad_dict_input": lambda lib, x, w: lib.func.grad(
        lambda d: (d["x"] * d["w"][:, :3].t().sum()).sum())({"x": x, "w": w}),
    "grad_unused_input": lambda lib, x, w: lib.func.grad(
        lambda a, b: a.sum() * 2, argnums=(0, 1))(x, w),
    "vjp": lambda lib, x, w: lib.func.vjp(lambda a, b: f_vec(lib, a, b), x, w)[1](
        lib.ones(4, 5)),
    "vjp_value": lambda lib, x, w: lib.func.vjp(lambda a: a.exp(), x)[0],
    "vjp_aux": lambda lib, x, w: (lambda r: (r[0], r[1](lib.ones(4, 3)), r[2]))(
        lib.func.vjp(lambda a: (a.exp(), a.sum()), x, has_aux=True)),
    "vjp_tuple_outputs": lambda lib, x, w: lib.func.vjp(lambda a: (a.exp(), a.sin().sum()), x)[
        1]((lib.ones(4, 3), lib.tensor(2.0))),
    "jvp": lambda lib, x, w: lib.func.jvp(lambda a, b: f_vec(lib, a, b), (x, w),
                                         (lib.ones(4, 3), w * 0.5)),
    "jvp_aux": lambda lib, x, w: lib.func.jvp(lambda a: (a.sin(), a.cos()), (x,),
                                             (lib.ones(4, 3),), has_aux=True),
    "linearize": lambda lib, x, w: lib.func.linearize(lambda a: a.sin() * a, x)[1](x * 2),
    "jacrev": lambda lib, x, w: lib.func.jacrev(lambda a: f_vec(lib, a, w))(x),
    "jacrev_argnums": lambda lib, x, w: lib.func.jacrev(
        lambda a, b: f_vec(lib, a, b), argnums=(0, 1))(x, w),
    "jacrev_aux_chunk": lambda lib, x, w: lib.func.jacrev(
        lambda a: (a.exp(), a.sum()), has_aux=True, chunk_size=5)(x),
    "jacrev_multiple_outputs": lambda lib, x, w: lib.func.jacrev(lambda a: (a.exp(), a.sum()))(
        x),
    "jacfwd": lambda lib, x, w: lib.func.jacfwd(lambda a: f_vec(lib, a, w))(x),
    "jacfwd_argnums": lambda lib, x, w: lib.func.jacfwd(
        lambda a, b: f_vec(lib, a, b), argnums=(0, 1))(x, w),
    "jacfwd_aux": lambda lib, x, w: lib.func.jacfwd(lambda a: (a.exp(), a.sum()),
                                                    has_aux=True)(x),
    "hessian": lambda lib, x, w: lib.func.hessian(lambda a: f_scalar(lib, a))(x[0]),
    "hessian_argnums": lambda lib, x, w: lib.func.hessian(
        lambda a, b: (a.sin() * b).sum(), argnums=(0, 1))(x[0], w[0, :3]),
    # compositions
    "grad_grad": lambda lib, x, w: lib.func.grad(
        lambda a: lib.func.grad(lambda b: (b.sin() ** 3).sum())(a).sum())(x),
    "vmap_grad": lambda lib, x, w: lib.func.vmap(lib.func.grad(lambda a: f_scalar(lib, a)))(x),
    "grad_vmap": lambda lib, x, w: lib.func.grad(
        lambda a: lib.func.vmap(lambda r: (r.exp() * r).sum())(a).sum())(x),
    "vmap_vjp": lambda lib, x, w: lib.func.vmap(
        lambda a: lib.func.vjp(lambda b: b.sin() * b, a)[1](lib.ones(3)))(x),
    "vmap_jvp": lambda lib, x, w: lib.func.vmap(
        lambda a, v: lib.func.jvp(lambda b: b.sin() * b, (a,), (v,)))(x, x * 2),
    "jvp_jvp": lambda lib, x, w: lib.func.jvp(
        lambda a: lib.func.jvp(lambda b: b.sin() * b, (a,), (lib.ones(3),))[1], (x[0],),
        (lib.ones(3),)),
    "grad_jvp": lambda lib, x, w: lib.func.grad(
        lambda a: lib.func.jvp(lambda b: (b.sin() * b).sum(), (a,), (lib.ones(3),))[1])(x[0]),
    "jvp_grad": lambda lib, x, w: lib.func.jvp(
        lib.func.grad(lambda b: (b.sin() * b).sum()), (x[0],), (lib.ones(3),)),
    "jacfwd_jacrev": lambda lib, x, w: lib.func.jacfwd(
        lib.func.jacrev(lambda a: (a.exp() * a).sum()))(x[0]),
    "jacrev_jacrev": lambda lib, x, w: lib.func.jacrev(
        lib.func.jacrev(lambda a: (a.exp() * a).sum()))(x[0]),
    "jacfwd_jacfwd": lambda lib, x, w: lib.func.jacfwd(
        lib.func.jacfwd(lambda a: (a.exp() * a).sum()))(x[0]),
    "vmap_jacrev": lambda lib, x, w: lib.func.vmap(lib.func.jacrev(lambda a: a.exp() * a.sum()))(
        x),
    "vmap_hessian": lambda lib, x, w: lib.func.vmap(
        lib.func.hessian(lambda a: (a.sin() * a).sum()))(x),
    "vmap_vmap_grad": lambda lib, x, w: lib.func.vmap(lib.func.vmap(
        lib.func.grad(lambda a: a.sin() * a)))(x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    parity(CASES[name], arr(4, 3), arr(5, 3, seed=1), atol=1e-4)


ERRORS = [
    lambda lib, x: lib.func.grad(lambda a: a)(x),
    lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=2)(x),
    lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=-2)(x),
    lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=(0, 0))(x),
    lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=())(x),
    lambda lib, x: lib.func.grad(lambda a: a.sum(), has_aux=True)(x),
    lambda lib, x: lib.func.grad(lambda a: (a.sum(), 1, 2), has_aux=True)(x),
    lambda lib, x: lib.func.grad(lambda a: (a.sum(), a))(x),
    lambda lib, x: lib.func.grad(lambda a: a.sum())(3),
    lambda lib, x: lib.func.jvp(lambda a: a, x, x),
    lambda lib, x: lib.func.jvp(lambda a: a, (x,), (x[0],)),
    lambda lib, x: lib.func.jvp(lambda a: a, (x,), (x, x)),
    lambda lib, x: lib.func.vjp(lambda a: a, x)[1](x[0]),
    lambda lib, x: lib.func.vjp(lambda a: 3, x),
    lambda lib, x: lib.func.jacrev(lambda a: a, argnums=1)(x),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_as_torch(i):
    errors_alike(ERRORS[i], arr(3, 4))


def test_grad_result_is_detached_at_top_level():
    import retrograd

    g = retrograd.func.grad(lambda a: (a * a).sum())(retrograd.tensor(arr(3)))
    assert g.grad_fn is None and not g.requires_grad


def test_grad_of_input_requiring_grad_stays_differentiable():
    import retrograd

    x = retrograd.tensor(arr(3), requires_grad=True)
    g = retrograd.func.grad(lambda a: (a ** 3).sum())(x)
    (gg,) = retrograd.autograd.grad(g.sum(), x)
    assert ((gg - 6 * x.detach()).abs() < 1e-5).all()
