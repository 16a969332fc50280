"""retain_grad(): a hook on the tensor's grad_fn output slot that fills the tensor's `.grad`."""

from __future__ import annotations

import weakref

from retrograd._autograd.state import state
from retrograd._tensor import Tensor


def install_retains_grad(t: Tensor) -> None:
    ref = weakref.ref(t)

    def retain(grad: Tensor | None) -> None:
        var = ref()
        if var is None or grad is None:
            return
        if var._grad is None:
            if state.grad_enabled:
                var._grad = grad.clone(memory_format="contiguous_format")
            else:
                import numpy as np

                from retrograd._tensor import _wrap

                var._grad = _wrap(np.array(grad._data, order="C", copy=True))
        else:
            var._grad = var._grad + grad

    meta = t._get_meta()
    meta.retains_grad = True
    fn = t.grad_fn
    fn._get_hooks().retains_grad[t._output_nr] = retain
    meta.retain_handle = retain


def move_retains_grad(t: Tensor, old_fn, new_fn) -> None:
    """An in-place op gave t a new grad_fn: its retains_grad hook follows it (as in PyTorch)."""
    meta = t._meta
    if meta is None or not meta.retains_grad:
        return
    hooks = old_fn._hooks if old_fn is not None else None
    if hooks is not None:
        hooks.retains_grad.pop(t._output_nr, None)
    if new_fn is not None:  # None: a view's grad_fn is regenerated later, the hook moves then
        new_fn._get_hooks().retains_grad[0] = meta.retain_handle
