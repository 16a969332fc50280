"""retrograd.svd_lowrank, retrograd.pca_lowrank and retrograd._lowrank.get_approximate_basis
against torch.

retrograd's generator does not produce torch's random numbers, so the two libraries start the
range finder from different random matrices. The comparisons therefore use inputs where the
answer does not depend on the random start: q = min(m, n) (the exact SVD) or a matrix of exact
rank r <= q (exact singular values and reconstruction), with singular vectors compared up to
sign. Gradients are checked with the seed reset inside the function, so every evaluation
draws the same random matrix."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck
from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")


def _matrix(shape: tuple, rank: int | None = None, seed: int = 0) -> np.ndarray:
    """A random (*, m, n) matrix, of exact rank `rank` when given, with well separated
    singular values."""
    rng = np.random.default_rng(seed)
    *batch, m, n = shape
    k = min(m, n) if rank is None else rank
    u, _ = np.linalg.qr(rng.standard_normal((*batch, m, k)))
    v, _ = np.linalg.qr(rng.standard_normal((*batch, n, k)))
    s = np.arange(k, 0, -1, dtype=np.float64) * 2.0 + 1.0
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def _signed(x):
    # each column multiplied by the sign of its largest-magnitude element
    _, idx = x.abs().max(-2, keepdim=True)
    return x * x.gather(-2, idx).sign()


def _reconstruction(U, S, V):
    return (U * S.unsqueeze(-2)) @ V.mT


def _orthonormal(lib, X) -> bool:
    k = X.shape[-1]
    return bool(lib.allclose(X.mT @ X, lib.eye(k, dtype=X.dtype).expand(X.mT.shape[:-1] + (k,)),
                             atol=1e-5))


def _full_svd(lib, shape, dtype_name, niter):
    A = lib.tensor(_matrix(shape), dtype=getattr(lib, dtype_name))
    lib.manual_seed(0)
    U, S, V = lib.svd_lowrank(A, q=min(shape[-2:]), niter=niter)
    return [S, _signed(U), _signed(V), str(U.dtype), str(S.dtype), list(U.shape),
            list(S.shape), list(V.shape), _orthonormal(lib, U), _orthonormal(lib, V)]


@pytest.mark.parametrize("shape", [(5, 4), (4, 5), (6, 6), (2, 7, 3), (2, 3, 3, 5)])
@pytest.mark.parametrize("niter", [0, 2])
def test_full_q_is_the_exact_svd_like_torch(shape, niter):
    both(_full_svd, shape, "float64", niter, rtol=1e-8, atol=1e-8)


def test_float32_like_torch():
    both(_full_svd, (6, 4), "float32", 2, rtol=1e-4, atol=1e-4)


def _low_rank(lib, shape, rank, q, niter):
    A = lib.tensor(_matrix(shape, rank=rank, seed=1))
    lib.manual_seed(0)
    U, S, V = lib.svd_lowrank(A, q=q, niter=niter)
    return [S[..., :rank], bool((S[..., rank:].abs() < 1e-10).all()), _reconstruction(U, S, V),
            _signed(U[..., :rank]), _signed(V[..., :rank]), list(U.shape), list(S.shape),
            list(V.shape), _orthonormal(lib, U), _orthonormal(lib, V)]


@pytest.mark.parametrize("shape,rank,q", [((12, 8), 2, 4), ((8, 12), 3, 3), ((3, 10, 9), 2, 5),
                                          ((9, 9), 1, 6)])
def test_exact_low_rank_like_torch(shape, rank, q):
    out = both(_low_rank, shape, rank, q, 2, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(out[2].numpy(), _matrix(shape, rank=rank, seed=1), atol=1e-10)


def test_top_singular_values_of_a_general_matrix():
    # a full-rank matrix with a fast decaying spectrum: the top values are found closely
    rng = np.random.default_rng(3)
    u, _ = np.linalg.qr(rng.standard_normal((40, 30)))
    v, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    a = (u * 10.0 ** -np.arange(30.0)[None, :] * 0.5) @ v.T
    retrograd.manual_seed(0)
    _, S, _ = retrograd.svd_lowrank(retrograd.tensor(a), q=8, niter=2)
    expected = torch.linalg.svdvals(torch.tensor(a))[:4].numpy()
    np.testing.assert_allclose(S[:4].numpy(), expected, rtol=1e-8)


def _with_mean(lib, shape, rank, q, mean_shape):
    A = lib.tensor(_matrix(shape, rank=rank, seed=2))
    M = lib.tensor(np.random.default_rng(5).standard_normal(mean_shape))
    lib.manual_seed(0)
    U, S, V = lib.svd_lowrank(A + M, q=q, M=M)
    return [S[..., :rank], _reconstruction(U, S, V), list(U.shape), list(V.shape)]


@pytest.mark.parametrize("shape,mean_shape", [((10, 7), (10, 7)), ((10, 7), (7,)),
                                              ((7, 10), (1, 10)), ((2, 9, 6), (9, 6))])
def test_mean_is_subtracted_like_torch(shape, mean_shape):
    out = both(_with_mean, shape, 2, 4, mean_shape, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(out[1].numpy(), _matrix(shape, rank=2, seed=2), atol=1e-10)


def _pca(lib, shape, q, center):
    A = lib.tensor(_matrix(shape, seed=4) + 3.0)
    lib.manual_seed(0)
    U, S, V = lib.pca_lowrank(A, q=q, center=center)
    # full q: the exact SVD of the (centered) data; centering m rows leaves rank m - 1, so
    # the direction of a zero singular value is arbitrary and left out
    k = min(shape[-2] - 1, q) if center else q
    return [S, _signed(U[..., :k]), _signed(V[..., :k]), _reconstruction(U, S, V),
            list(U.shape), list(S.shape), list(V.shape)]


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("shape,q", [((8, 5), 5), ((4, 9), 4), ((2, 6, 5), 5)])
def test_pca_like_torch(shape, q, center):
    out = both(_pca, shape, q, center, rtol=1e-8, atol=1e-8)
    a = _matrix(shape, seed=4) + 3.0
    if center:
        a = a - a.mean(axis=-2, keepdims=True)
    np.testing.assert_allclose(out[3].numpy(), a, atol=1e-10)


def _pca_default_q(lib, shape, center):
    lib.manual_seed(0)
    U, S, V = lib.pca_lowrank(lib.tensor(_matrix(shape, seed=6)), center=center)
    return [list(U.shape), list(S.shape), list(V.shape), str(S.dtype)]


@pytest.mark.parametrize("shape", [(20, 10), (3, 8), (10, 5), (2, 4, 30, 7)])
@pytest.mark.parametrize("center", [True, False])
def test_pca_default_q_like_torch(shape, center):
    both(_pca_default_q, shape, center)


def _basis(lib, shape, q, with_mean):
    A = lib.tensor(_matrix(shape, rank=2, seed=7))
    M = lib.ones(shape, dtype=A.dtype) if with_mean else None
    lib.manual_seed(0)
    Q = lib._lowrank.get_approximate_basis(A if M is None else A + M, q, niter=1, M=M)
    return [list(Q.shape), str(Q.dtype), _orthonormal(lib, Q), Q @ Q.mT @ A]


@pytest.mark.parametrize("with_mean", [False, True])
@pytest.mark.parametrize("shape,q", [((9, 6), 3), ((2, 9, 6), 4), ((4, 6), 6)])
def test_approximate_basis_like_torch(shape, q, with_mean):
    both(_basis, shape, q, with_mean, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("shape,q", [((9, 5), 3), ((5, 9), 3), ((2, 7, 4), 2)])
def test_draws_one_random_matrix_of_torchs_shape(shape, q):
    # the generator advances exactly as one randn(n, q) of the tall orientation's n columns
    A = retrograd.tensor(_matrix(shape), dtype=retrograd.float32)
    retrograd.manual_seed(11)
    retrograd.svd_lowrank(A, q=q)
    after = retrograd.randn(3)
    retrograd.manual_seed(11)
    retrograd.randn(min(shape[-2:]), q, dtype=retrograd.float32)
    assert retrograd.equal(after, retrograd.randn(3))


def test_same_seed_same_result():
    A = retrograd.tensor(_matrix((12, 10), seed=8))
    results = []
    for _ in range(2):
        retrograd.manual_seed(42)
        results.append(retrograd.svd_lowrank(A, q=3, niter=1))
    for x, y in zip(*results):
        assert retrograd.equal(x, y)


def test_top_level_names_and_signatures():
    import inspect

    for name in ("svd_lowrank", "pca_lowrank"):
        ours, theirs = getattr(retrograd, name), getattr(torch, name)
        assert ours.__module__ == "retrograd._lowrank"
        assert list(inspect.signature(ours).parameters) == \
            list(inspect.signature(theirs).parameters)
        assert [p.default for p in inspect.signature(ours).parameters.values()] == \
            [p.default for p in inspect.signature(theirs).parameters.values()]
    assert retrograd._lowrank.__all__ == torch._lowrank.__all__
    assert list(inspect.signature(retrograd._lowrank.get_approximate_basis).parameters) == \
        list(inspect.signature(torch._lowrank.get_approximate_basis).parameters)


ERROR_CASES = {
    "svd_list": lambda lib: lib.svd_lowrank([[1.0, 2.0], [3.0, 4.0]]),
    "pca_list": lambda lib: lib.pca_lowrank([[1.0, 2.0], [3.0, 4.0]]),
    "basis_int": lambda lib: lib._lowrank.get_approximate_basis(3, 2),
    "svd_1d": lambda lib: lib.svd_lowrank(lib.ones(4), q=2),
    "svd_negative_q": lambda lib: lib.svd_lowrank(lib.ones(5, 4), q=-1),
    "svd_int_input": lambda lib: lib.svd_lowrank(lib.ones(5, 4, dtype=lib.int64), q=2),
    "svd_mean_dtype": lambda lib: lib.svd_lowrank(lib.ones(5, 4, dtype=lib.float64), q=2,
                                                  M=lib.zeros(4)),
    "svd_mean_shape": lambda lib: lib.svd_lowrank(lib.ones(5, 4), q=2, M=lib.zeros(3)),
    "pca_q_too_big": lambda lib: lib.pca_lowrank(lib.ones(5, 4), q=5),
    "pca_negative_q": lambda lib: lib.pca_lowrank(lib.ones(5, 4), q=-1),
    "pca_negative_niter": lambda lib: lib.pca_lowrank(lib.ones(5, 4), niter=-1),
    "pca_none_niter": lambda lib: lib.pca_lowrank(lib.ones(5, 4), niter=None),
    "pca_float_q": lambda lib: lib.pca_lowrank(lib.ones(5, 4), q=2.5),
    "pca_int_centered": lambda lib: lib.pca_lowrank(lib.ones(5, 4, dtype=lib.int64)),
    "pca_int_uncentered": lambda lib: lib.pca_lowrank(lib.ones(5, 4, dtype=lib.int64),
                                                      center=False),
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_errors_like_torch(case):
    ours = error_of(ERROR_CASES[case], retrograd)
    theirs = error_of(ERROR_CASES[case], torch)
    assert theirs[0] == "raised"
    assert ours == theirs


def _shapes_of_oversized_q(lib, shape, q):
    # svd_lowrank itself does not check q: the reduced QR caps the rank at min(m, n)
    lib.manual_seed(0)
    return [list(x.shape) for x in lib.svd_lowrank(lib.ones(shape), q=q)]


@pytest.mark.parametrize("shape,q", [((5, 4), 7), ((4, 5), 5), ((5, 4), 0), ((5, 4), None)])
def test_unchecked_q_like_torch(shape, q):
    both(_shapes_of_oversized_q, shape, q)


def _seeded(fn, seed: int = 0):
    def wrapped(*args):
        retrograd.manual_seed(seed)
        return fn(*args)
    return wrapped


@pytest.mark.parametrize("shape,q", [((7, 5), 2), ((5, 7), 2), ((2, 6, 4), 3)])
def test_gradcheck_reconstruction(shape, q):
    # the reconstruction Q Q^H A depends only on the basis, smooth for a generic A
    A = retrograd.tensor(_matrix(shape, rank=q, seed=9), requires_grad=True)
    fn = _seeded(lambda a: _reconstruction(*retrograd.svd_lowrank(a, q=q, niter=1)))
    assert gradcheck(fn, (A,))
    assert gradgradcheck(fn, (A,))


@pytest.mark.parametrize("shape,q", [((7, 5), 3), ((5, 7), 5), ((2, 6, 4), 4)])
def test_gradcheck_singular_values(shape, q):
    A = retrograd.tensor(_matrix(shape, seed=10), requires_grad=True)
    assert gradcheck(_seeded(lambda a: retrograd.svd_lowrank(a, q=q)[1]), (A,))


def test_gradcheck_with_mean_and_pca():
    A = retrograd.tensor(_matrix((6, 5), seed=11), requires_grad=True)
    M = retrograd.tensor(np.random.default_rng(12).standard_normal((5,)), requires_grad=True)
    assert gradcheck(_seeded(lambda a, m: retrograd.svd_lowrank(a, q=5, M=m)[1]), (A, M))
    assert gradcheck(_seeded(lambda a: retrograd.pca_lowrank(a, q=3)[1]), (A,))


def _grad_of_singular_values(lib, shape):
    # q = min(m, n): S are the exact singular values and d(sum S)/dA = U V^T for any start
    A = lib.tensor(_matrix(shape, seed=13), requires_grad=True)
    lib.manual_seed(0)
    U, S, V = lib.svd_lowrank(A, q=min(shape[-2:]))
    (S * lib.arange(1.0, S.shape[-1] + 1, dtype=S.dtype)).sum().backward()
    return [A.grad, type(S.grad_fn).__name__, type(U.grad_fn).__name__,
            type(V.grad_fn).__name__]


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 3)])
def test_gradient_of_singular_values_like_torch(shape):
    both(_grad_of_singular_values, shape, rtol=1e-7, atol=1e-7)
