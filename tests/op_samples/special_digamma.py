"""Samples for lgamma, digamma, polygamma, mvlgamma and special.zeta (and retrograd.special's
names for them).

Inputs stay away from the poles at 0, -1, -2, ... (finite differences need a smooth function);
one sample per op sits between two negative integers. The in-place polygamma_ is gradchecked
only as a constant factor: its forward-mode tangent is wrong here (forward_ad pairs an in-place
op with its out-of-place twin by argument position, and polygamma_ takes `self` first where
polygamma takes `n` first; see tests/test_lgamma_digamma.py), so a parity-only sample checks
its gradient and node against torch. torch refuses forward-mode AD for zeta (its derivative in
`input` is not implemented), and every gradcheck sample also runs forward mode, so zeta is
gradchecked as a constant factor here (its derivative in `other` against torch by the
parity-only samples, and by gradcheck in tests/test_zeta.py).
"""

from tests.op_samples import Sample, arr, pos
from tests.op_samples.pointwise import inplace


def between_poles(*shape, seed: int = 21):
    """Values in (-2.9, -2.1): between two poles, far from both."""
    return arr(*shape, low=-2.9, high=-2.1, seed=seed)


def zeta_const(lib, x, s, q):
    return x * lib.special.zeta(s, q)


def zeta_scalar_self_const(lib, x, q):
    return x * lib.special.zeta(2.5, q)


def zeta_scalar_other_const(lib, x, s):
    return x * lib.special.zeta(s, 1.5)


_ZETA_OTHER_ONLY = (False, True)


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
    Sample(zeta_const, (arr(2, 3), pos(2, 3, low=1.5, high=5.0), pos(2, 3, low=0.5, high=4.0)),
           requires_grad=(True, False, False)),
    Sample(zeta_scalar_self_const, (arr(2, 3), pos(2, 3, low=0.5, high=4.0)),
           requires_grad=(True, False)),
    Sample(zeta_scalar_other_const, (arr(3), pos(3, low=1.5, high=5.0)),
           requires_grad=(True, False)),
    Sample("special.zeta", (pos(2, 3, low=1.5, high=5.0), pos(2, 3, low=0.5, high=4.0)),
           requires_grad=_ZETA_OTHER_ONLY, gradcheck=False),
    Sample("special.zeta", (pos(3, 1, low=1.5, high=9.0), pos(4, low=0.2, high=20.0)),
           requires_grad=_ZETA_OTHER_ONLY, gradcheck=False, parity_dtype="float64",
           parity_rtol=1e-13, name="broadcast_float64"),
    Sample("special.zeta", (2.5, pos(2, 3, low=0.5, high=4.0)), requires_grad=(True,),
           gradcheck=False, name="scalar_self"),
    Sample("special.zeta", (pos(2, 3, low=1.5, high=5.0), 1.5), requires_grad=(False,),
           gradcheck=False, name="scalar_other"),
]
