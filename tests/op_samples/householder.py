"""Samples for geqrf (no derivative, as in torch) and linalg.householder_product / orgqr on
reflectors and tau from geqrf of fixed matrices (and a tau that is not geqrf's)."""

import numpy as np

from tests.op_samples import Sample, arr

NOT_DIFF = {"gradcheck": False, "requires_grad": (False,)}


def _reflectors(*shape, seed):
    """geqrf's output of a random matrix, computed with NumPy (LAPACK's layout)."""
    a = arr(*shape, seed=seed)
    h, tau = np.linalg.qr(a, mode="raw")
    return np.ascontiguousarray(np.swapaxes(h, -1, -2)), tau


def geqrf_const(lib, x, a):
    """geqrf has no derivative (torch's NotImplemented node): a constant factor here."""
    return x * lib.geqrf(a)[0]


A43, T43 = _reflectors(4, 3, seed=1)
A33, T33 = _reflectors(3, 3, seed=2)
AB, TB = _reflectors(2, 5, 3, seed=3)

SAMPLES = [
    Sample("geqrf", (arr(4, 3, seed=1),), name="tall", **NOT_DIFF),
    Sample("geqrf", (arr(3, 5, seed=2),), name="wide", **NOT_DIFF),
    Sample("geqrf", (arr(2, 4, 4, seed=3),), name="batch", **NOT_DIFF),
    Sample("Tensor.geqrf", (arr(5, 2, seed=4),), **NOT_DIFF),
    Sample(geqrf_const, (arr(4, 3, seed=9), arr(4, 3, seed=1)), requires_grad=(True, False)),
    Sample("linalg.householder_product", (A43, T43)),
    Sample("linalg.householder_product", (A33, T33), name="square"),
    Sample("linalg.householder_product", (AB, TB), name="batch"),
    Sample("linalg.householder_product", (A43, T43[:2]), name="fewer_tau"),
    Sample("linalg.householder_product", (arr(4, 3, seed=5), arr(3, seed=6)), name="any_tau"),
    Sample("linalg.householder_product", (arr(3, 2, seed=7), arr(1, seed=8)), name="one_tau"),
    Sample("orgqr", (A43, T43)),
    Sample("Tensor.orgqr", (AB, TB), name="batch"),
]
