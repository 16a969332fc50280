"""Samples for lgamma, digamma, polygamma and mvlgamma (and retrograd.special's names for them).

Inputs stay away from the poles at 0, -1, -2, ... (finite differences need a smooth function);
one sample per op sits between two negative integers. The in-place polygamma_ is gradchecked
only as a constant factor: its forward-mode tangent is wrong here (forward_ad pairs an in-place
op with its out-of-place twin by argument position, and polygamma_ takes `self` first where
polygamma takes `n` first; see tests/test_lgamma_digamma.py), so a parity-only sample checks
its gradient and node against torch.
"""

from tests.op_samples import Sample, arr, pos
from tests.op_samples.pointwise import inplace


def between_poles(*shape, seed: int = 21):
    """Values in (-2.9, -2.1): between two poles, far from both."""
    return arr(*shape, low=-2.9, high=-2.1, seed=seed)


def polygamma_inplace(lib, x, n):
    return x.clone().polygamma_(n)


def polygamma_inplace_const(lib, x, a):
    return x * a.clone().polygamma_(2)


SAMPLES = [
    Sample("lgamma", (pos(2, 3, low=0.2, high=4.0),)),
    Sample("lgamma", (between_poles(2, 3),), name="negative"),
    Sample("Tensor.lgamma", (pos(3, 2, low=0.3, high=3.0, noncontig=True),), name="noncontig"),
    Sample(inplace("lgamma_"), (pos(2, 3, low=0.5, high=3.0),)),
    Sample("digamma", (pos(2, 3, low=0.3, high=4.0),)),
    Sample("digamma", (between_poles(3),), name="negative"),
    Sample("Tensor.digamma", (pos(2, 3, low=1.0, high=9.0),), name="method"),
    Sample(inplace("digamma_"), (pos(2, 3, low=0.5, high=3.0),)),
    Sample("polygamma", (1, pos(2, 3, low=0.3, high=4.0)), name="trigamma"),
    Sample("polygamma", (2, pos(2, 3, low=0.5, high=4.0)), name="two"),
    Sample("polygamma", (0, pos(3, low=0.5, high=3.0)), name="digamma"),
    Sample("polygamma", (3, between_poles(2, 3)), name="negative"),
    Sample("Tensor.polygamma", (pos(3, 2, low=0.5, high=3.0, noncontig=True), 2),
           name="noncontig"),
    Sample(polygamma_inplace_const, (arr(2, 3), pos(2, 3, low=0.5, high=3.0)),
           requires_grad=(True, False)),
    Sample(polygamma_inplace, (pos(2, 3, low=0.5, high=3.0), 1), gradcheck=False),
    Sample("mvlgamma", (pos(2, 3, low=1.5, high=4.0), 2)),
    Sample("mvlgamma", (pos(4, low=2.5, high=6.0),), {"p": 4}, name="p4"),
    Sample("Tensor.mvlgamma", (pos(3, 2, low=1.2, high=3.0, noncontig=True), 1), name="p1"),
    Sample(inplace("mvlgamma_"), (pos(2, 3, low=2.0, high=4.0), 3)),
    Sample("special.gammaln", (pos(2, 3, low=0.5, high=3.0),)),
    Sample("special.psi", (pos(3, low=0.5, high=3.0),)),
    Sample("special.digamma", (pos(3, low=0.5, high=3.0),)),
    Sample("special.polygamma", (2, pos(3, low=0.5, high=3.0))),
    Sample("special.multigammaln", (pos(2, 3, low=1.5, high=4.0), 2)),
]
