"""With create_graph=True the results of autograd.functional are differentiable functions of
the inputs: gradcheck and gradgradcheck them against finite differences."""

from __future__ import annotations

import pytest

import retrograd
from retrograd.autograd import functional as F
from retrograd.autograd import gradcheck, gradgradcheck


def _inputs():
    retrograd.manual_seed(0)
    return (retrograd.randn(3, dtype=retrograd.float64, requires_grad=True),
            retrograd.randn(2, 2, dtype=retrograd.float64, requires_grad=True))


def _vec(a, b):
    return (a[:2].sin() @ b, (a.exp().sum() * b).tanh())


def _scalar(a, b):
    return (a.sin() * (b @ b).sum()).sum() + (a[:2] @ b.exp()).pow(2).sum()


def _flat(res):
    if isinstance(res, retrograd.Tensor):
        return (res,)
    return tuple(t for r in res for t in _flat(r))


PRODUCTS = {
    "vjp": lambda a, b: F.vjp(_vec, (a, b), (a[:2] * 2, b.cos()), create_graph=True),
    "jvp": lambda a, b: F.jvp(_vec, (a, b), (a.cos(), b * b), create_graph=True),
    "vhp": lambda a, b: F.vhp(_scalar, (a, b), (a * a, b.sin()), create_graph=True),
    "hvp": lambda a, b: F.hvp(_scalar, (a, b), (a * a, b.sin()), create_graph=True),
    "jacobian": lambda a, b: F.jacobian(_vec, (a, b), create_graph=True),
    "jacobian_vectorized": lambda a, b: F.jacobian(_vec, (a, b), create_graph=True,
                                                  vectorize=True),
    "hessian": lambda a, b: F.hessian(_scalar, (a, b), create_graph=True),
    "hessian_vectorized": lambda a, b: F.hessian(_scalar, (a, b), create_graph=True,
                                                vectorize=True),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_results_gradcheck(name):
    def fn(a, b):
        return _flat(PRODUCTS[name](a, b))

    inputs = _inputs()
    assert gradcheck(fn, inputs)
    if not name.startswith("hessian"):  # a fourth derivative: slow, and hvp covers it
        assert gradgradcheck(fn, inputs)
