"""cosine_similarity, pairwise_distance (compositions) and glu's errors against torch: values,
gradients, eps handling, broadcasting, modules; gradcheck in float64."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck
from tests.parity.harness import both, error_of

pytest.importorskip("torch")


def _leaf(lib, a):
    return lib.from_numpy(np.array(a, dtype=np.float64)).requires_grad_()


def _grads_of(lib, out, *leaves):
    w = lib.from_numpy(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)))
    (out * w).sum().backward()
    return [out, *[x.grad for x in leaves]]


CASES = {
    "rows": (np.random.default_rng(0).standard_normal((3, 4)),
             np.random.default_rng(1).standard_normal((3, 4)), {}),
    "dim0_broadcast": (np.random.default_rng(2).standard_normal((4, 1, 3)),
                       np.random.default_rng(3).standard_normal((4, 2, 3)), {"dim": 0}),
    "tiny_norms_eps": ([[1e-4, 2e-4], [1e-2, 0.0]], [[3.0, 1.0], [1e-2, 0.0]], {"eps": 1e-3}),
    "vectors": ([1.0, 2.0, 3.0], [-1.0, 0.5, 2.0], {"dim": 0}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_cosine_similarity_matches_torch(case):
    a, b, kw = CASES[case]

    def prog(lib):
        x1, x2 = _leaf(lib, a), _leaf(lib, b)
        return _grads_of(lib, lib.nn.functional.cosine_similarity(x1, x2, **kw), x1, x2)

    both(prog)


def test_cosine_similarity_module_float32_and_errors_match_torch():
    def prog(lib):
        m = lib.nn.CosineSimilarity(dim=0, eps=1e-6)
        x = lib.arange(6.0).view(2, 3)
        return [repr(m), m(x, x + 1), lib.cosine_similarity(x, -x),
                error_of(lib.nn.functional.cosine_similarity, lib.tensor([1, 2]),
                         lib.tensor([2, 3]), dim=0)]

    both(prog)


PAIRWISE = {
    "default": ((3, 4), (3, 4), {}),
    "p1_keepdim": ((3, 4), (3, 4), {"p": 1.0, "keepdim": True}),
    "broadcast_1d": ((2, 3), (3,), {"p": 3.0, "eps": 1e-3}),
    "both_1d": ((4,), (4,), {}),
}


@pytest.mark.parametrize("case", list(PAIRWISE))
def test_pairwise_distance_matches_torch(case):
    s1, s2, kw = PAIRWISE[case]
    a = np.random.default_rng(0).standard_normal(s1)
    b = np.random.default_rng(1).standard_normal(s2)

    def prog(lib):
        x1, x2 = _leaf(lib, a), _leaf(lib, b)
        out = lib.nn.functional.pairwise_distance(x1, x2, **kw)
        return [*_grads_of(lib, out, x1, x2), repr(lib.nn.PairwiseDistance(**kw)),
                lib.nn.PairwiseDistance(**kw)(x1, x2)]

    both(prog)


def test_gradcheck_cosine_similarity_and_pairwise_distance():
    rng = np.random.default_rng(0)
    x1 = retrograd.from_numpy(rng.standard_normal((3, 4))).requires_grad_()
    x2 = retrograd.from_numpy(rng.standard_normal((3, 4))).requires_grad_()
    F = retrograd.nn.functional
    for fn in (lambda a, b: F.cosine_similarity(a, b),
               lambda a, b: F.cosine_similarity(a, b, dim=0),
               lambda a, b: F.pairwise_distance(a, b),
               lambda a, b: F.pairwise_distance(a, b, p=3.0, keepdim=True)):
        assert gradcheck(fn, (x1, x2))
        assert gradgradcheck(fn, (x1, x2))


def test_glu_errors_match_torch():
    def prog(lib):
        F = lib.nn.functional
        return [error_of(F.glu, lib.zeros(3)), error_of(F.glu, lib.zeros(2, 3), 1),
                error_of(F.glu, lib.zeros(2, 3), -1), error_of(F.glu, lib.zeros(2, 4), 2),
                repr(lib.nn.GLU(0)), lib.nn.GLU()(lib.arange(4.0))]

    both(prog)
