"""vmap's batched wrappers die with their last reference, not at the next garbage collection:
while one lives, every op goes through the wrapper-subclass dispatcher (slower) and compiled
functions could not tell a user's dispatch mode from it."""

from __future__ import annotations

import gc

import numpy as np

import retrograd
from retrograd._ops import dispatch
from retrograd.func import grad, vmap


def test_vmap_leaves_no_wrapper_and_no_dispatcher_behind():
    x = retrograd.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4))
    was_enabled = gc.isenabled()
    gc.collect()  # cycles other tests left (hessians keep some until a collection) go first
    gc.disable()
    try:
        vmap(lambda r: r.sin())(x)
        out = vmap(grad(lambda r: (r.sin() ** 2).sum()))(x)
        assert dispatch.mode_stack == []
    finally:
        if was_enabled:
            gc.enable()
    np.testing.assert_allclose(out.numpy(), np.sin(2 * x.numpy()))


def test_compiled_function_after_vmap_is_still_compiled():
    x = retrograd.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4))
    keep = vmap(lambda r: r * 2, out_dims=0)  # its wrappers are gone once it returns
    keep(x)
    compiled = retrograd.compile(lambda t: (t.sin() * t).sum())
    y = x.clone().requires_grad_()
    out = compiled(y)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"  # not run eagerly
    out.backward()
    np.testing.assert_allclose(y.grad.numpy(), (np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy())))
