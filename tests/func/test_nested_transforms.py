"""Transforms nested three deep, in float64, against torch.func on the same programs: forward
mode through vmap (jvp of vmap, jvp of vmap of jvp), vmap around both, grad around them,
jacfwd of jacrev and the hessian of a vmapped function."""

from __future__ import annotations

import numpy as np
import pytest

from tests.func._parity import parity


def _inner_jvp(lib, y):
    return lib.func.jvp(lib.sin, (y,), (lib.ones_like(y),))[1]


CASES = {
    "jvp_vmap": lambda lib, x, t: lib.func.jvp(
        lambda a: lib.func.vmap(lambda r: r.cos() * r.sum())(a), (x,), (t,)),
    "jvp_vmap_scalar_rows": lambda lib, x, t: lib.func.jvp(
        lambda a: lib.func.vmap(lib.cos)(a[:, 0]), (x,), (t,)),
    "jvp_vmap_jvp": lambda lib, x, t: lib.func.jvp(
        lambda a: lib.func.vmap(lambda y: _inner_jvp(lib, y))(a), (x,), (t,)),
    "jvp_vmap_jvp_rows": lambda lib, x, t: lib.func.jvp(
        lambda a: lib.func.vmap(lambda r: lib.func.jvp(
            lambda s: (s.exp() * s).sum() * s, (r,), (r * 2,))[1])(a), (x,), (t,)),
    "vmap_jvp_vmap": lambda lib, x, t: lib.func.vmap(
        lambda a, v: lib.func.jvp(lambda b: lib.func.vmap(lambda s: s.sin() * s.exp())(b),
                                  (a,), (v,)))(x.reshape(2, 2, 3), t.reshape(2, 2, 3)),
    "grad_vmap_jvp": lambda lib, x, t: lib.func.grad(
        lambda a: lib.func.vmap(lambda r: lib.func.jvp(
            lambda s: (s.sin() * s).sum(), (r,), (lib.ones_like(r),))[1])(a).sum())(x),
    "jacfwd_jacrev": lambda lib, x, t: lib.func.jacfwd(
        lib.func.jacrev(lambda a: (a.sin() * a.exp()).sum() * a))(x[0]),
    "hessian_of_vmapped": lambda lib, x, t: lib.func.hessian(
        lambda a: lib.func.vmap(lambda r: (r.sin() * r).sum())(a.reshape(2, 3)).prod())(
            x.reshape(-1)[:6]),
    "jvp_jvp_vmap": lambda lib, x, t: lib.func.jvp(
        lambda a: lib.func.jvp(lambda b: lib.func.vmap(lambda r: r.tanh() * r)(b), (a,),
                               (lib.ones_like(a),))[1], (x,), (t,)),
    # products of products: matmul's broadcasting gives one operand a batch of one beside
    # the others' full batch, which the per-example fallback broadcasts
    "hessian_of_matrix_products": lambda lib, x, t: lib.func.hessian(
        lambda a: a.mm(a).mm(a.mm(a)).sum())(x[:3]),
    "vmap_jvp_jvp": lambda lib, x, t: lib.func.vmap(
        lambda a: lib.func.jvp(lambda b: _inner_jvp(lib, b) * b, (a,), (a * 0.5,)))(x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_nested_matches_torch(name):
    rng = np.random.default_rng(3)
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    parity(CASES[name], x, t, atol=1e-10)


def test_outer_jvp_tangent_has_no_history():
    """A top-level jvp returns tangents detached (torch's have no grad_fn), even when a nested
    transform kept a graph for its sake."""
    import retrograd

    x = retrograd.randn(3, dtype=retrograd.float64)
    _, tangent = retrograd.func.jvp(
        lambda a: retrograd.func.vmap(lambda y: _inner_jvp(retrograd, y))(a), (x,), (x,))
    assert tangent.grad_fn is None and not tangent.requires_grad
