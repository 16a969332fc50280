"""checkpoint recomputes its function under the autocast state its forward ran in."""

from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import both

DATA = np.random.default_rng(0).standard_normal((3, 3, 3)).astype(np.float32)


def _program(lib, reentrant: bool, forward_enabled: bool, backward_enabled: bool):
    from importlib import import_module

    checkpoint = import_module(lib.__name__ + ".utils.checkpoint").checkpoint
    x, y, z = (lib.tensor(a, requires_grad=True) for a in DATA)
    dtypes = []

    def fn(x, y, z):
        a = lib.mm(x, y)
        b = lib.mm(a, z)
        c = lib.mm(b.float(), z)
        dtypes.append(str(b.dtype))
        return c

    with lib.autocast("cpu", dtype=lib.bfloat16, enabled=forward_enabled):
        out = checkpoint(fn, x, y, z, use_reentrant=reentrant).sum()
    with lib.autocast("cpu", dtype=lib.float16, enabled=backward_enabled):
        out.backward()
    # bfloat16 values are compared as float32 (NumPy has no bfloat16), dtypes by name
    return [out.float(), x.grad, y.grad, z.grad, dtypes, str(out.dtype), str(x.grad.dtype)]


@pytest.mark.parametrize("reentrant", [False, True])
@pytest.mark.parametrize("forward_enabled,backward_enabled",
                         [(True, False), (False, True), (True, True), (False, False)])
def test_recompute_uses_the_forward_autocast_state(reentrant, forward_enabled, backward_enabled):
    both(_program, reentrant, forward_enabled, backward_enabled, rtol=1e-2, atol=1e-2)


def test_recompute_leaves_the_autocast_state_as_it_found_it():
    import retrograd

    checkpoint = retrograd.utils.checkpoint.checkpoint
    x = retrograd.ones(2, 2, requires_grad=True)
    with retrograd.autocast("cpu"):
        out = checkpoint(lambda t: retrograd.mm(t, t), x, use_reentrant=False).sum()
    out.backward()
    assert not retrograd.is_autocast_enabled("cpu")
    assert retrograd.get_autocast_dtype("cpu") is retrograd.bfloat16
