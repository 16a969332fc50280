"""An input without a tangent adds nothing to add's, sub's and lerp's tangent, as torch's zero
tensors add nothing: signed zeros of the tangent survive and an integer operand is a constant.
A tangent has its output's dtype. Each program runs on torch and on retrograd, by the dual fast
path and by the general rule, and the tangents must agree bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd
from retrograd._ops import forward_ad_fast as fast

PROGRAMS = {
    "a + w": lambda lib, a, w, k: a + w,
    "w + a": lambda lib, a, w, k: w + a,
    "a - w": lambda lib, a, w, k: a - w,
    "w - a": lambda lib, a, w, k: w - a,
    "a + 0.1": lambda lib, a, w, k: a + 0.1,
    "a - 1": lambda lib, a, w, k: a - 1,
    "add alpha, dual first": lambda lib, a, w, k: lib.add(a, w, alpha=2),
    "add alpha, dual second": lambda lib, a, w, k: lib.add(w, a, alpha=2),
    "sub alpha, dual second": lambda lib, a, w, k: lib.sub(w, a, alpha=3),
    "a + a": lambda lib, a, w, k: a + a,
    "a + int tensor": lambda lib, a, w, k: a + k,
    "int tensor - a": lambda lib, a, w, k: k - a,
    "a + broadcast int": lambda lib, a, w, k: a + lib.ones(2, 4, dtype=lib.int64),
    "a + float64": lambda lib, a, w, k: a + w.double(),
    "a + bool tensor": lambda lib, a, w, k: a + (w > 0),
    "zeros.add_(a)": lambda lib, a, w, k: lib.zeros(4).add_(a),
    "a.clone().sub_(w)": lambda lib, a, w, k: a.clone().sub_(w),
    "lerp scalar weight": lambda lib, a, w, k: lib.lerp(a, w, 0.5),
    "lerp scalar, end": lambda lib, a, w, k: lib.lerp(w, a, 0.3),
    "lerp tensor weight": lambda lib, a, w, k: lib.lerp(a, w, w * 0.5),
    "lerp weight only": lambda lib, a, w, k: lib.lerp(w, w * 2, a * 0.5),
    "lerp all": lambda lib, a, w, k: lib.lerp(a, a * 3, a * 0.25),
    "w.clone().mul_(a)": lambda lib, a, w, k: w.clone().mul_(a),
    # a contribution from a lower-precision input is promoted to the output's dtype
    "addcdiv into float64": lambda lib, a, w, k: lib.addcdiv(w.double(), a, k),
    "a * float64": lambda lib, a, w, k: a * w.double(),
    # relu passes no -0.0 where it blocks the tangent
    "relu": lambda lib, a, w, k: a.relu(),
    "threshold": lambda lib, a, w, k: lib.nn.functional.threshold(a, 0.7, 0.0),
}


def _tangent(lib, program, general: bool = False):
    x = lib.tensor([1.0, -2.0, 0.5, 3.0])
    v = lib.tensor([-0.0, 0.0, 1.5, -2.0])  # both zeros: which one comes out is the point
    w = lib.tensor([0.25, -1.0, 2.0, 0.0])
    k = lib.tensor([5, 6, 7, 8])
    fast.force_general[0] = general
    try:
        _, t = lib.func.jvp(lambda a: program(lib, a, w, k), (x,), (v,))
    finally:
        fast.force_general[0] = False
    return t


@pytest.mark.parametrize("general", [False, True], ids=["fast path", "general rule"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_tangent_matches_torch_bit_for_bit(name, general):
    want = _tangent(torch, PROGRAMS[name])
    got = _tangent(retrograd, PROGRAMS[name], general)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    g, w = got.numpy(), want.numpy()
    np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(np.signbit(g), np.signbit(w))  # -0.0 and 0.0 told apart


def test_tangent_takes_the_outputs_dtype():
    """minimum(float32, float64): the float32 input's contribution is promoted (torch's -0.0
    where the other input wins is not matched: it multiplies by the mask, retrograd selects)."""
    for general in (False, True):
        got = _tangent(retrograd, lambda lib, a, w, k: lib.minimum(a, w.double()), general)
        want = _tangent(torch, lambda lib, a, w, k: lib.minimum(a, w.double()))
        assert got.dtype == retrograd.float64 and want.dtype == torch.float64
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_absent_term_under_vmap_of_jvp():
    """Batched operands: the stand-in zeros are the batched class's own, negated."""
    xs = np.array([[1.0, 2.0], [3.0, 4.0]])
    vs = np.array([[-0.0, 1.0], [0.0, -1.0]])
    ws = np.array([[0.5, -0.0], [2.0, 0.0]])

    def run(lib):
        def f(x, v, w):
            return lib.func.jvp(lambda a: w + a, (x,), (v,))[1]

        return lib.func.vmap(f)(*(lib.tensor(a) for a in (xs, vs, ws))).numpy()

    got, want = run(retrograd), run(torch)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_relu_backward_blocks_with_positive_zero_as_torch():
    """threshold_backward is torch's where(x <= threshold, 0, grad): a negative or infinite
    gradient where relu blocks gives 0.0 (not -0.0 or nan), and a nan input passes it on."""
    x = [-1.0, 2.0, 0.0, float("nan"), -5.0]
    g = [-3.0, -3.0, float("inf"), 2.0, float("-inf")]
    grads = {}
    for lib in (torch, retrograd):
        for dtype in ("float16", "float32", "float64", "bfloat16"):
            t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            (t.relu() * lib.tensor(g, dtype=getattr(lib, dtype))).sum().backward()
            grads[lib.__name__, dtype] = t.grad.float().numpy()
    for dtype in ("float16", "float32", "float64", "bfloat16"):
        want, got = grads["torch", dtype], grads["retrograd", dtype]
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(grads["retrograd", "float32"], [0.0, -3.0, 0.0, 2.0, 0.0])
