"""func.linearize against torch.func.linearize: values (plain, pytrees, several outputs, under
vmap, nested in grad), torch's errors for tangents that do not fit, and the forward run once:
calling the returned jvp_fn evaluates only the linear part."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.func._parity import errors_alike, parity


def _f(lib, a, b):
    return (a.sin() * b).exp(), (a * b).sum()


CASES = {
    "plain": lambda lib, x, y: lib.func.linearize(lambda a: a.sin() * a.exp(), x)[1](y),
    "value": lambda lib, x, y: lib.func.linearize(lambda a: a.tanh() * a, x)[0],
    "two_inputs_two_outputs": lambda lib, x, y: lib.func.linearize(
        lambda a, b: _f(lib, a, b), x, y)[1](y, x * 0.5),
    "called_twice": lambda lib, x, y: (lambda jf: (jf(y), jf(x), jf(y + 1)))(
        lib.func.linearize(lambda a: a.cos() @ a.exp().t(), x)[1]),
    "dict_input": lambda lib, x, y: lib.func.linearize(
        lambda d: d["p"].sin() * d["q"], {"p": x, "q": y})[1]({"p": y, "q": x}),
    "vmap_of_jvp_fn": lambda lib, x, y: lib.func.vmap(
        lib.func.linearize(lambda a: a.sin() * a.sum(), x)[1])(lib.stack([x, y, x + y])),
    "constant_output": lambda lib, x, y: lib.func.linearize(lambda a: lib.ones(2) * 3, x)[1](y),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_linearize_matches_torch(name):
    rng = np.random.default_rng(5)
    parity(CASES[name], rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), atol=1e-10)


ERRORS = [
    lambda lib, x: lib.func.linearize(lambda a, b: a * b, x, x)[1](x),
    lambda lib, x: lib.func.linearize(lambda a, b: a * b, x, x)[1]((x, x)),
    lambda lib, x: lib.func.linearize(lambda a, b: a * b, x, x)[1](x, x[:2]),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_linearize_errors_as_torch(i):
    errors_alike(ERRORS[i], np.ones((3, 4)))


def test_linearize_dtype_error_as_torch():
    import torch

    got = []
    for lib in (retrograd, torch):
        x = lib.ones(3, dtype=lib.float64)
        with pytest.raises(RuntimeError) as e:
            lib.func.linearize(lambda a, b: a * b, x, x)[1](x, x.float())
        got.append(str(e.value).replace("torch.", "retrograd."))
    assert got[0] == got[1]


def test_jvp_fn_does_not_run_the_function_again():
    calls = []

    def f(a):
        calls.append(1)
        return a.sin() * a

    x = retrograd.tensor(np.linspace(-1.0, 1.0, 5))
    _, jvp_fn = retrograd.func.linearize(f, x)
    assert len(calls) == 1
    for scale in (1.0, 2.0, -3.0):
        got = jvp_fn(retrograd.full((5,), scale, dtype=retrograd.float64))
        expected = scale * (np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy()))
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
        assert got.grad_fn is None
    assert len(calls) == 1
