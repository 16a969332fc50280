"""Samples for igamma and igammac (the regularized incomplete gamma functions).

torch refuses forward-mode AD for both ops, and every gradcheck sample is also run through
forward mode (tests/forward_ad), so the gradcheck samples use the ops on constants inside a
differentiable expression, as the floor_divide samples do. The derivative for `other` is
compared with torch's by the parity-only samples here, and gradchecked in
tests/test_igamma.py.
"""

from tests.op_samples import Sample, arr, pos


def igamma_const(lib, x, a, y):
    return x * lib.igamma(a, y)


def igammac_const(lib, x, a, y):
    return x * a.igammac(y)


def igamma_inplace_const(lib, x, a, y):
    return x * a.clone().igamma_(y)


def igammac_inplace_const(lib, x, a, y):
    return x * a.clone().igammac_(y)


_CONSTANTS = (False, False)
_OTHER_ONLY = (False, True)

SAMPLES = [
    Sample(igamma_const, (arr(2, 3), pos(2, 3), pos(2, 3)), requires_grad=(True, *_CONSTANTS)),
    Sample(igammac_const, (arr(2, 3), pos(2, 3), pos(3)), requires_grad=(True, *_CONSTANTS)),
    Sample(igamma_inplace_const, (arr(2, 3), pos(2, 3), pos(2, 3)),
           requires_grad=(True, *_CONSTANTS)),
    Sample(igammac_inplace_const, (arr(2, 3), pos(2, 3), pos(1, 3)),
           requires_grad=(True, *_CONSTANTS)),
    # values, node names and the gradient for `other` against torch's
    Sample("igamma", (pos(2, 3), pos(2, 3)), requires_grad=_OTHER_ONLY, gradcheck=False),
    Sample("igammac", (pos(2, 3), pos(3)), requires_grad=_OTHER_ONLY, gradcheck=False,
           name="broadcast"),
    Sample("Tensor.igamma", (pos(3, 1, low=2.0, high=30.0), pos(4, low=0.1, high=40.0)),
           requires_grad=_OTHER_ONLY, gradcheck=False, parity_dtype="float64",
           parity_rtol=1e-12, parity_atol=1e-300, name="wide_float64"),
    Sample("Tensor.igammac", (pos(2, 3, noncontig=True), pos(2, 3)), requires_grad=_OTHER_ONLY,
           gradcheck=False, name="noncontig"),
]
