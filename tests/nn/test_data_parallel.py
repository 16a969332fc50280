"""nn.DataParallel on a machine without accelerators, against torch."""

from __future__ import annotations

import pytest

from tests.nn.nn_harness import module_parity, randn
from tests.parity.harness import both, error_of

pytest.importorskip("torch")


def test_data_parallel_wraps_and_calls_the_module():
    def make(lib):
        return lib.nn.DataParallel(lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh()))

    out = module_parity(make, [randn(2, 3)])
    assert list(out["param_grads"]) == ["module.0.weight", "module.0.bias"]


def test_data_parallel_surface_matches_torch():
    def prog(lib):
        inner = lib.nn.Linear(2, 3)
        m = lib.nn.DataParallel(inner, device_ids=None)
        loaded = lib.nn.DataParallel(lib.nn.Linear(2, 3))
        loaded.load_state_dict(m.state_dict())
        return [repr(m), list(m.state_dict()), m.module is inner, m.device_ids,
                hasattr(m, "dim"), lib.nn.parallel.DataParallel is lib.nn.DataParallel,
                bool((loaded.module.weight == inner.weight).all()), m(lib.ones(1, 2)).shape,
                error_of(lib.nn.parallel.data_parallel, inner, lib.zeros(1, 2))]

    both(prog)
