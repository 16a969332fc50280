"""aten.convolution_backward against torch's: the three gradients for plain, strided, grouped,
dilated and transposed convolutions (1-d to 3-d), output_mask leaving gradients out, tangents
through it (forward AD on a dual weight), and its own gradients by gradcheck."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

# (input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups)
CASES = {
    "2d": ((2, 4, 8, 8), (6, 4, 3, 3), (1, 1), (0, 0), (1, 1), False, (0, 0), 1),
    "2d_strided_grouped": ((2, 4, 9, 9), (6, 2, 3, 3), (2, 2), (1, 1), (1, 1), False, (0, 0), 2),
    "2d_dilated": ((1, 3, 10, 10), (2, 3, 3, 3), (1, 2), (2, 1), (2, 2), False, (0, 0), 1),
    "1d": ((3, 2, 12), (4, 2, 5), (2,), (2,), (1,), False, (0,), 1),
    "3d": ((1, 2, 5, 5, 5), (3, 2, 2, 2, 2), (1, 1, 1), (0, 1, 0), (1, 1, 1), False,
           (0, 0, 0), 1),
    "2d_transposed": ((2, 4, 5, 5), (4, 3, 3, 3), (2, 2), (1, 1), (1, 1), True, (1, 0), 1),
}


def _run(lib, case, mask, seed=0):
    in_shape, w_shape, stride, padding, dilation, transposed, out_pad, groups = CASES[case]
    g = np.random.default_rng(seed)
    inp = lib.tensor(g.standard_normal(in_shape))
    weight = lib.tensor(g.standard_normal(w_shape))
    out = lib.ops.aten.convolution(inp, weight, None, stride, padding, dilation, transposed,
                                   out_pad, groups)
    grad = lib.tensor(g.standard_normal(tuple(out.shape)))
    bias = (w_shape[1] * groups,) if transposed else (w_shape[0],)
    res = lib.ops.aten.convolution_backward(grad, inp, weight, bias, stride, padding, dilation,
                                            transposed, out_pad, groups, mask)
    return [None if r is None else r.numpy() for r in res]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False), (False, True, True)])
def test_gradients_match_torch(case, mask):
    ours, theirs = _run(retrograd, case, mask), _run(torch, case, mask)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("lib", [retrograd, torch], ids=["retrograd", "torch"])
def test_undefined_outputs_with_a_dual_weight(lib):
    fw = lib.autograd.forward_ad
    g = np.random.default_rng(1)
    weight = lib.tensor(g.standard_normal((6, 1, 5, 5)))
    inp = lib.tensor(g.standard_normal((1, 1, 8, 8)))
    grad = lib.ones(1, 6, 4, 4, dtype=lib.float64)
    with fw.dual_level():
        dual = fw.make_dual(weight, lib.ones_like(weight))
        gi, gw, gb = lib.ops.aten.convolution_backward(
            grad, inp, dual, (0,), (1, 1), (0, 0), (1, 1), False, (0, 0), 1, (True, False, False))
        tangent = fw.unpack_dual(gi).tangent
    assert gw is None and gb is None
    # the input gradient is linear in the weight: its tangent is the gradient for all-ones
    # weights
    expected = lib.ops.aten.convolution_backward(
        grad, inp, lib.ones_like(weight), (0,), (1, 1), (0, 0), (1, 1), False, (0, 0), 1,
        (True, False, False))[0]
    np.testing.assert_allclose(tangent.numpy(), expected.numpy(), rtol=1e-12)


def test_gradcheck_through_convolution_backward():
    g = np.random.default_rng(2)
    grad = retrograd.tensor(g.standard_normal((1, 2, 3, 3)), requires_grad=True)
    inp = retrograd.tensor(g.standard_normal((1, 2, 5, 5)), requires_grad=True)
    weight = retrograd.tensor(g.standard_normal((2, 2, 3, 3)), requires_grad=True)

    def f(grad, inp, weight):
        return retrograd.ops.aten.convolution_backward(
            grad, inp, weight, (2,), (1, 1), (0, 0), (1, 1), False, (0, 0), 1,
            (True, True, True))

    assert retrograd.autograd.gradcheck(f, (grad, inp, weight))
    assert retrograd.autograd.gradgradcheck(f, (grad, inp, weight))
