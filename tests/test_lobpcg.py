"""retrograd.lobpcg against torch.lobpcg: eigenpairs (vectors up to sign), gradients of
sign-invariant functions, errors; retrograd solves exactly where torch iterates (see
retrograd._lobpcg), so values are compared at torch's convergence tolerance."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck
from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")


def _spd(m: int, batch: tuple = (), seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (m, m))
    # well separated eigenvalues so that eigenvectors are well defined
    q, _ = np.linalg.qr(a)
    w = np.arange(1, m + 1, dtype=np.float64) * 1.5
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _signed(u):
    # each column multiplied by the sign of its largest-magnitude element
    _, idx = u.abs().max(-2, keepdim=True)
    return u * u.gather(-2, idx).sign()


def _values(lib, m, k, largest, batch=(), with_b=False):
    A = lib.tensor(_spd(m, batch))
    B = lib.tensor(_spd(m, batch, seed=1)) if with_b else None
    X = lib.eye(m, k, dtype=A.dtype)
    if batch:
        X = X.expand(batch + (m, k))
    D, U = lib.lobpcg(A, k=k, B=B, X=X, largest=largest, tol=1e-12, niter=2000)
    return [D, _signed(U), str(D.dtype), list(U.shape)]


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("m,k,batch", [(6, 1, ()), (9, 3, ()), (6, 2, (2,))])
def test_eigenpairs_match_torch(m, k, largest, batch):
    both(_values, m, k, largest, batch, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("largest", [True, False])
def test_generalized_problem_matches_torch(largest):
    both(_values, 9, 2, largest, (), True, rtol=1e-6, atol=1e-6)


def _grads(lib, m, k, largest):
    A = lib.tensor(_spd(m), requires_grad=True)
    D, U = lib.lobpcg(A, k=k, largest=largest, tol=1e-12, niter=2000)
    weights = lib.arange(1.0, m + 1, dtype=A.dtype)
    # sign-invariant: eigenvalues and the projector onto each eigenvector
    loss = (D * D).sum() + ((U * U) * weights.unsqueeze(-1)).sum()
    loss.backward()
    return [A.grad, type(D.grad_fn).__name__, lib.allclose(A.grad, A.grad.mT)]


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("m,k", [(6, 1), (9, 2)])
def test_gradients_of_sign_invariant_functions_match_torch(m, k, largest):
    both(_grads, m, k, largest, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("largest", [True, False])
def test_gradcheck_and_gradgradcheck(largest):
    A = retrograd.tensor(_spd(6, seed=3), requires_grad=True)

    def f(A):
        D, U = retrograd.lobpcg(A, k=2, largest=largest)
        return D, _signed(U)

    assert gradcheck(f, (A,))
    assert gradgradcheck(f, (A,), atol=1e-4)


def test_float32_and_no_grad_path():
    A = retrograd.tensor(_spd(6), dtype=retrograd.float32)
    D, U = retrograd.lobpcg(A, k=1)
    assert D.dtype is retrograd.float32 and U.dtype is retrograd.float32 and D.grad_fn is None
    np.testing.assert_allclose(D.numpy(), [9.0], rtol=1e-5)


def _errors(lib):
    A = lib.tensor(_spd(6))
    B = lib.tensor(_spd(6, seed=1), requires_grad=True)
    too_many = error_of(lib.lobpcg, A, k=3)
    D, _ = lib.lobpcg(A.clone().requires_grad_(), k=1, B=B)
    backward_b = error_of(D.sum().backward)
    return [too_many, backward_b]


def test_errors_match_torch():
    both(_errors)
