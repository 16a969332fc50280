"""Tensor.unfold, F.unfold/F.fold and nn.Unfold/nn.Fold beyond the op samples: errors, module
reprs, fold as unfold's adjoint, and the view semantics of Tensor.unfold."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of

pytest.importorskip("torch")


def test_tensor_unfold_errors_and_layout_match_torch():
    def prog(lib):
        x = lib.arange(20.0).view(5, 4)
        s = lib.tensor(3.0)
        w = x.t().unfold(1, 3, 2)
        return [error_of(x.unfold, 0, 6, 1), error_of(x.unfold, 0, 2, 0),
                error_of(x.unfold, 2, 1, 1), error_of(x.unfold, 0, -1, 1),
                error_of(s.unfold, 0, 2, 1), s.unfold(0, 1, 1), w, w.stride(),
                x.unfold(-1, 2, 1).stride(), error_of(lib.zeros(0, 3).unfold, 0, 1, 1)]

    both(prog)


def test_tensor_unfold_is_a_view_sharing_memory_and_version():
    x = retrograd.arange(6.0)
    w = x.unfold(0, 3, 1)
    assert w._base is x
    x[2] = 100.0
    assert w[0, 2].item() == 100.0 and w[2, 0].item() == 100.0
    assert w._version == x._version


def test_unfold_fold_errors_match_torch():
    def prog(lib):
        F = lib.nn.functional
        x, c = lib.zeros(1, 2, 4, 5), lib.zeros(1, 8, 12)
        return [error_of(F.unfold, lib.zeros(2, 3, 4, 5, 6), 2), error_of(F.unfold, x, 6),
                error_of(F.unfold, x, 2, stride=0), error_of(F.unfold, x, 0),
                error_of(F.unfold, x, 2, padding=-1), error_of(F.unfold, x, 2, dilation=0),
                error_of(F.fold, c, (4, 6), 2), error_of(F.fold, lib.zeros(1, 7, 12), (4, 5), 2),
                error_of(F.fold, lib.zeros(8), (4, 5), 2),
                error_of(F.fold, c, (4, 5), (2, 3), stride=2)]

    both(prog)


def test_unfold_fold_modules_match_torch():
    def prog(lib):
        nn = lib.nn
        x = lib.arange(40.0).view(1, 2, 4, 5)
        unfold, fold = nn.Unfold((2, 3), padding=1, stride=(1, 2)), nn.Fold((4, 5), (2, 3),
                                                                             padding=1,
                                                                             stride=(1, 2))
        return [repr(unfold), repr(fold), repr(nn.Unfold(2)), repr(nn.Fold(4, 2)),
                unfold(x), fold(unfold(x))]

    both(prog)


def test_fold_is_the_adjoint_of_unfold():
    rng = np.random.default_rng(0)
    F = retrograd.nn.functional
    x = retrograd.from_numpy(rng.standard_normal((2, 3, 5, 6)))
    kw = dict(kernel_size=(2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))
    cols = F.unfold(x, **kw)
    y = retrograd.from_numpy(rng.standard_normal(tuple(cols.shape)))
    lhs = (cols * y).sum().item()
    rhs = (x * F.fold(y, (5, 6), **kw)).sum().item()
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))
