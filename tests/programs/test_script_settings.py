"""Start-up calls of training scripts (thread counts, matmul precision, deterministic mode) and
the broadcasting helpers, against torch. Settings are restored after each test."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")


@pytest.fixture
def restore_settings():
    saved = [(lib, lib.get_num_threads(), lib.get_float32_matmul_precision(),
              lib.are_deterministic_algorithms_enabled(),
              lib.is_deterministic_algorithms_warn_only_enabled()) for lib in (retrograd, torch)]
    yield
    for lib, threads, precision, det, warn_only in saved:
        lib.set_num_threads(threads)
        lib.set_float32_matmul_precision(precision)
        lib.use_deterministic_algorithms(det, warn_only=warn_only)


def test_settings_round_trip_like_torch(restore_settings):
    def program(lib):
        lib.set_num_threads(1)
        lib.set_float32_matmul_precision("high")
        lib.use_deterministic_algorithms(True, warn_only=True)
        out = [lib.get_num_threads(), lib.get_float32_matmul_precision(),
               lib.are_deterministic_algorithms_enabled(),
               lib.is_deterministic_algorithms_warn_only_enabled(),
               error_of(lib.set_num_threads, 0)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.set_float32_matmul_precision("fast")
        out.append([str(w.message).split(" (Triggered")[0] for w in caught])
        out.append(lib.get_float32_matmul_precision())
        return out

    both(program)


def test_broadcasting_helpers_like_torch():
    a_np = np.random.default_rng(0).standard_normal((3, 1))

    def program(lib):
        a = lib.tensor(a_np, requires_grad=True)
        x, y = lib.broadcast_tensors(a, lib.ones(2, dtype=lib.double))
        to = lib.broadcast_to(a, (2, 3, 4))
        (x.sum() * 2 + to.sum()).backward()
        return {"x": x, "y": y, "to": to, "grad": a.grad, "view": x._base is a,
                "nodes": [type(x.grad_fn).__name__, y.grad_fn, type(to.grad_fn).__name__],
                "method": a.broadcast_to((3, 5)).shape,
                "shapes": [lib.broadcast_shapes((2, 1), (3,)), lib.broadcast_shapes(4, (2, 1)),
                           lib.broadcast_shapes()],
                "errors": [error_of(lib.broadcast_tensors, lib.ones(2), lib.ones(3)),
                           error_of(lib.broadcast_to, lib.ones(2), (3,)),
                           error_of(lib.broadcast_shapes, (2,), (3,)),
                           error_of(lib.broadcast_shapes, (5, 2), (4, 1, 1), (3, 1))],
                "float": [lib.is_floating_point(a), lib.is_floating_point(lib.ones(1).long()),
                          error_of(lib.is_floating_point, 1.0)]}

    both(program)
