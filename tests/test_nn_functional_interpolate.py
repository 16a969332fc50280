"""F.interpolate and the Upsample modules beyond the op samples: float32 parity over modes and
sizes, argument resolution, errors and warnings, module reprs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.parity.harness import both, error_of

pytest.importorskip("torch")

CASES = [
    ((1, 2, 5), dict(scale_factor=2.5)), ((1, 2, 5), dict(size=3)),
    ((1, 2, 7), dict(size=3, mode="nearest-exact")),
    ((1, 2, 5), dict(scale_factor=1.7, mode="linear")),
    ((1, 2, 5), dict(size=3, mode="linear")),
    ((2, 1, 3, 4), dict(scale_factor=(2, 1.5), mode="bilinear")),
    ((2, 1, 3, 4), dict(size=(5, 2), mode="bilinear", align_corners=True)),
    ((1, 1, 4, 5), dict(size=(7, 3), mode="bicubic")),
    ((1, 1, 4, 5), dict(scale_factor=0.6, mode="bicubic")),
    ((1, 1, 5, 5), dict(scale_factor=1.0, mode="bicubic", align_corners=True)),
    ((1, 1, 2, 3, 4), dict(scale_factor=2, mode="trilinear")),
    ((1, 1, 4, 4), dict(scale_factor=0.4)), ((1, 1, 3, 3), dict(size=(3, 3))),
    ((1, 2, 5, 7), dict(scale_factor=0.5, mode="area")),
    ((1, 1, 6), dict(size=4, mode="area")),
]


@pytest.mark.parametrize("shape, kwargs", CASES, ids=[f"{i}" for i in range(len(CASES))])
def test_interpolate_float32_matches_torch(shape, kwargs):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def prog(lib):
        x = lib.from_numpy(a.copy()).requires_grad_()
        y = lib.nn.functional.interpolate(x, **kwargs)
        w = lib.from_numpy(np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(y.shape))
        (y * w).sum().backward()
        return [y, x.grad, y.grad_fn.name()]

    both(prog)


def test_interpolate_errors_match_torch():
    def prog(lib):
        F = lib.nn.functional
        x3, x4 = lib.zeros(1, 1, 4), lib.zeros(1, 1, 4, 4)
        return [error_of(F.interpolate, x4),
                error_of(F.interpolate, x4, size=2, scale_factor=2),
                error_of(F.interpolate, x4, size=(2, 2, 2)),
                error_of(F.interpolate, x4, scale_factor=(2, 2, 2)),
                error_of(F.interpolate, x4, size=(2.0, 2)),
                error_of(F.interpolate, x4, size=2, recompute_scale_factor=True),
                error_of(F.interpolate, x4, size=2, align_corners=True),
                error_of(F.interpolate, x3, size=2, mode="bilinear"),
                error_of(F.interpolate, x4, size=2, mode="linear"),
                error_of(F.interpolate, x4, size=2, mode="trilinear"),
                error_of(F.interpolate, lib.zeros(4, 4), size=2),
                error_of(F.interpolate, x4, size=2, mode="cubic"),
                error_of(F.interpolate, x3, size=2, mode="linear", antialias=True),
                error_of(F.interpolate, x3, size=0, mode="linear"),
                error_of(F.interpolate, x4, size=(0, 2), mode="bilinear"),
                error_of(F.interpolate, lib.zeros(1, 1, 2, 2, 4), size=0, mode="trilinear"),
                error_of(F.interpolate, x4, scale_factor=0.1, mode="bicubic")]

    both(prog)


def test_upsample_modules_match_torch():
    def prog(lib):
        nn = lib.nn
        x = lib.arange(12.0).view(1, 1, 3, 4)
        mods = [nn.Upsample(scale_factor=2), nn.Upsample(size=(4, 5), mode="bilinear"),
                nn.Upsample(scale_factor=(1.5, 2), mode="bicubic", align_corners=True),
                nn.UpsamplingNearest2d(scale_factor=2), nn.UpsamplingBilinear2d(size=5)]
        return [(repr(m), m(x)) for m in mods]

    both(prog)


def test_deprecated_upsample_functions_warn_like_torch():
    def prog(lib):
        F = lib.nn.functional
        x = lib.arange(4.0).view(1, 1, 2, 2)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out = [F.upsample(x, scale_factor=2), F.upsample_nearest(x, size=3),
                   F.upsample_bilinear(x, scale_factor=2)]
        return out, [str(w.message) for w in rec]

    both(prog)
