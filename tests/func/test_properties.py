"""Property tests on random programs of ops: vmap(f)(x) equals stacking f(x[i]) (for any
in_dim), and jvp equals central finite differences in float64."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import retrograd

# each step maps a (3, 4)-shaped value to a (3, 4)-shaped value; some mix in a second input
UNARY = {
    "sin": lambda a: a.sin(), "exp_small": lambda a: (a * 0.3).exp(), "tanh": lambda a: a.tanh(),
    "relu": lambda a: retrograd.relu(a), "square": lambda a: a * a,
    "softmax": lambda a: retrograd.softmax(a, -1), "cumsum": lambda a: a.cumsum(0),
    "transpose_back": lambda a: a.t().contiguous().t(), "flip": lambda a: a.flip(1),
    "mean_bcast": lambda a: a - a.mean(0, keepdim=True),
    "sum_bcast": lambda a: a + a.sum(-1, keepdim=True) * 0.1,
    "reshape": lambda a: a.reshape(4, 3).reshape(3, 4), "matmul": lambda a: a @ a.t() @ a * 0.1,
    "max_dim": lambda a: a + a.max(1, keepdim=True).values,
}
BINARY = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (1.5 + b.tanh()), "where": lambda a, b: retrograd.where(a > b, a, b),
    "matmul": lambda a, b: a @ b.t() @ a * 0.1, "cat_narrow": lambda a, b:
    retrograd.cat([a, b], 1).narrow(1, 2, 4),
}

steps = st.lists(st.one_of(st.sampled_from(sorted(UNARY)).map(lambda n: ("u", n)),
                           st.sampled_from(sorted(BINARY)).map(lambda n: ("b", n))),
                 min_size=1, max_size=5)


def program(plan):
    def f(a, b):
        for kind, name in plan:
            a = UNARY[name](a) if kind == "u" else BINARY[name](a, b)
        return a
    return f


@settings(max_examples=40, deadline=None)
@given(plan=steps, in_dim=st.integers(-3, 2), batch_b=st.booleans(), seed=st.integers(0, 99))
def test_vmap_equals_stacking(plan, in_dim, batch_b, seed):
    rng = np.random.default_rng(seed)
    f = program(plan)
    shape = [3, 4]
    shape.insert(in_dim % 3, 5)
    x = retrograd.tensor(rng.standard_normal(shape))
    b = retrograd.tensor(rng.standard_normal((5, 3, 4) if batch_b else (3, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = retrograd.func.vmap(f, in_dims=(in_dim, 0 if batch_b else None))(x, b)
    xs = x.movedim(in_dim, 0)
    want = retrograd.stack([f(xs[i], b[i] if batch_b else b) for i in range(5)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(plan=steps, seed=st.integers(0, 99))
def test_jvp_equals_finite_differences(plan, seed):
    rng = np.random.default_rng(seed)
    f = program(plan)
    x = retrograd.tensor(rng.standard_normal((3, 4)))
    b = retrograd.tensor(rng.standard_normal((3, 4)))
    v = retrograd.tensor(rng.standard_normal((3, 4)))
    _, tangent = retrograd.func.jvp(lambda a: f(a, b), (x,), (v,))
    eps = 1e-6
    fd = (f(x + eps * v, b) - f(x - eps * v, b)) / (2 * eps)
    # where/relu/max have kinks; with eps this small one between x - eps v and x + eps v is
    # improbable for the random values drawn
    np.testing.assert_allclose(tangent.numpy(), fd.numpy(), rtol=1e-4, atol=1e-4)
