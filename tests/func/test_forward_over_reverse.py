"""Forward over reverse against torch.func: jvp of grad and hessian through in-place ops (the
node's copy of self's old value carries self's old tangent, batched or not), through the
reductions whose backward builds masks (max, std, norm), and Jacobians of empty inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd

PROGRAMS = {
    "clone().sin_()": lambda lib, a: a.clone().sin_().sum(),
    "mul_ then exp_": lambda lib, a: (a * 2).mul_(a).exp_().sum(),
    "relu_ of a product": lambda lib, a: (a * a.flip(0)).relu_().sum(),
    "std": lambda lib, a: a.std(),
    "norm": lambda lib, a: a.norm(),
    "max of squares": lambda lib, a: (a * a).max(),
    "amax along a dim": lambda lib, a: (a.reshape(2, 2) ** 3).amax(1).sum(),
    # batched products of a constant stack of matrices: the activations' backward kernels
    # then meet an unbatched result and a batched gradient, which broadcast
    "tanh of a batched product": lambda lib, a: (lib.tensor(W, dtype=lib.float64) @ a).tanh().sum(),
    "sigmoid of a batched product":
        lambda lib, a: (lib.tensor(W, dtype=lib.float64) @ a).sigmoid().pow(2).sum(),
}
X = [[0.5, 1.0, -2.0, 0.3], [2.0, -1.0, 0.7, 1.5]]
W = np.linspace(-1.0, 1.0, 48).reshape(3, 4, 4).tolist()


def _run(lib, name: str, how: str):
    f = lambda a: PROGRAMS[name](lib, a)  # noqa: E731
    x = lib.tensor(X, dtype=lib.float64)
    if how == "jvp of grad":
        v = lib.tensor([1.0, -0.5, 0.25, 2.0], dtype=lib.float64)
        return lib.func.jvp(lib.func.grad(f), (x[0],), (v,))[1]
    if how == "hessian":
        return lib.func.hessian(f)(x[0])
    return lib.func.vmap(lib.func.hessian(f))(x)


@pytest.mark.parametrize("how", ["jvp of grad", "hessian", "vmap of hessian"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_matches_torch(name, how):
    want = _run(torch, name, how).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every op here has a batching rule: no slow fallback
        got = _run(retrograd, name, how).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# in place on a view: CopySlices wraps the op's node, whose saved result must keep its tangent
VIEW_PROGRAMS = {
    "exp_ of a slice": lambda lib, a: (a * 2)[0:2].exp_().sum(),
    "sigmoid_ of a slice, times another": lambda lib, a: ((a * 2)[1:].sigmoid_() * a[0]).sum(),
    "mul_ of a slice": lambda lib, a: (a * 2)[0:2].mul_(a[2:]).sum(),
    "relu_ of a slice": lambda lib, a: ((a * 2)[0:2].relu_() * a[3]).sum(),
}


@pytest.mark.parametrize("name", list(VIEW_PROGRAMS))
def test_jvp_of_grad_through_inplace_on_a_view_matches_torch(name):
    def run(lib):
        x = lib.tensor(X[0], dtype=lib.float64)
        v = lib.tensor([1.0, -0.5, 0.25, 2.0], dtype=lib.float64)
        f = lambda a: VIEW_PROGRAMS[name](lib, a)  # noqa: E731
        return lib.func.jvp(lib.func.grad(f), (x,), (v,))[1].numpy()

    np.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-12, atol=1e-12)


def test_jacobians_of_empty_inputs_are_empty():
    for lib in (torch, retrograd):
        x = lib.zeros(0, 5, dtype=lib.float64)
        assert tuple(lib.func.jacfwd(lambda a: a.reshape(5, 0) * 2)(x).shape) == (5, 0, 0, 5)
        assert tuple(lib.func.hessian(lambda a: a.sum())(x).shape) == (0, 5, 0, 5)
        assert tuple(lib.func.jacfwd(lambda a: (a * 2).sum())(x).shape) == (0, 5)
