"""grid_sample and affine_grid beyond the op samples: torch's errors and warnings, edge
coordinates, empty inputs, an affine identity round trip."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from tests.nn.nn_harness import randn
from tests.nn_functional_helpers import raises_like

torch = pytest.importorskip("torch")
TF = torch.nn.functional

X = randn(2, 3, 4, 5)
G = np.random.default_rng(1).uniform(-1, 1, (2, 6, 7, 2)).astype(np.float32)


def _sample(lib, x=X, g=G, **kwargs):
    kwargs.setdefault("align_corners", False)
    return lib.nn.functional.grid_sample(lib.from_numpy(np.array(x, copy=True)),
                                         lib.from_numpy(np.array(g, copy=True)), **kwargs)


def _affine(lib, theta, size, **kwargs):
    kwargs.setdefault("align_corners", False)
    return lib.nn.functional.affine_grid(lib.from_numpy(np.array(theta, copy=True)), size,
                                         **kwargs)


ERRORS = {
    "grid_dtype": lambda lib: _sample(lib, g=G.astype(np.float64)),
    "batch": lambda lib: _sample(lib, g=G[:1]),
    "last_dim": lambda lib: _sample(lib, g=G[..., :1]),
    "rank": lambda lib: _sample(lib, g=G[0]),
    "empty_spatial": lambda lib: _sample(lib, x=X[..., :0]),
    "long_input": lambda lib: _sample(lib, x=X.astype(np.int64), g=G.astype(np.int64)),
    "mode": lambda lib: _sample(lib, mode="cubic"),
    "padding_mode": lambda lib: _sample(lib, padding_mode="wrap"),
    "bicubic_3d": lambda lib: _sample(lib, x=X[:, None], g=np.zeros((2, 1, 1, 1, 3),
                                                                    np.float32),
                                      mode="bicubic"),
    "theta_int": lambda lib: _affine(lib, np.zeros((2, 2, 3), np.int64), (2, 3, 4, 5)),
    "theta_shape": lambda lib: _affine(lib, np.zeros((2, 3, 3), np.float32), (2, 3, 4, 5)),
    "theta_shape_3d": lambda lib: _affine(lib, np.zeros((2, 2, 3), np.float32),
                                          (2, 3, 4, 5, 6)),
    "size_rank": lambda lib: _affine(lib, np.zeros((2, 2, 3), np.float32), (2, 3, 4)),
    "size_zero": lambda lib: _affine(lib, np.zeros((2, 2, 3), np.float32), (2, 3, 0, 5)),
    "size_batch": lambda lib: _affine(lib, np.zeros((2, 2, 3), np.float32), (3, 3, 4, 5)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    raises_like(lambda: ERRORS[name](retrograd), lambda: ERRORS[name](torch))


def test_default_align_corners_warns_like_torch():
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.grid_sample(retrograd.from_numpy(X), retrograd.from_numpy(G))
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.affine_grid(retrograd.zeros(1, 2, 3), (1, 1, 2, 2))
    with pytest.warns(UserWarning, match="unit-size grids when align_corners=True"):
        F.affine_grid(retrograd.zeros(1, 2, 3), (1, 1, 1, 2), align_corners=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grid_sample(retrograd.from_numpy(X), retrograd.from_numpy(G), align_corners=True)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_far_outside_and_exact_edge_coordinates(padding_mode, align_corners):
    g = np.array([-3.5, -1.0, -0.5, 0.0, 0.25, 1.0, 2.75, 7.1], np.float32)
    grid = np.stack(np.meshgrid(g, g[::-1]), -1)[None].repeat(2, 0)
    for mode in ("bilinear", "nearest", "bicubic"):
        kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        ours, theirs = _sample(retrograd, g=grid, **kw), _sample(torch, g=grid, **kw)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_size_one_input_and_empty_batch_or_channels():
    for x, g in ((X[:, :, :1, :1], G), (X[:0], G[:0]), (X[:, :0], G)):
        for align in (False, True):
            for pad in ("zeros", "border", "reflection"):
                kw = dict(padding_mode=pad, align_corners=align)
                ours, theirs = _sample(retrograd, x, g, **kw), _sample(torch, x, g, **kw)
                assert tuple(ours.shape) == tuple(theirs.shape)
                np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_identity_affine_grid_resamples_the_input():
    theta = np.tile(np.eye(2, 3, dtype=np.float32), (2, 1, 1))
    grid = _affine(retrograd, theta, (2, 3, 4, 5), align_corners=True)
    out = F.grid_sample(retrograd.from_numpy(X), grid, align_corners=True)
    np.testing.assert_allclose(out.numpy(), X, rtol=1e-5, atol=1e-6)


def test_grid_gradient_in_float32_matches_torch():
    rx, tx = retrograd.from_numpy(X.copy()), torch.from_numpy(X.copy())
    rg = retrograd.from_numpy(G.copy()).requires_grad_()
    tg = torch.from_numpy(G.copy()).requires_grad_()
    F.grid_sample(rx, rg, padding_mode="reflection", align_corners=False).pow(2).sum().backward()
    TF.grid_sample(tx, tg, padding_mode="reflection", align_corners=False).pow(2).sum().backward()
    np.testing.assert_allclose(rg.grad.numpy(), tg.grad.numpy(), rtol=1e-4, atol=1e-5)
