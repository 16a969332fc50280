"""Thread-local autograd state: grad mode, inference mode, saved-tensor hook stacks.

One `threading.local` subclass whose class attributes are the defaults, so a new thread starts
with grad mode on and no hooks without any per-thread set-up.
"""

from __future__ import annotations

import threading


class _State(threading.local):
    grad_enabled = True
    inference = False
    # torch.autograd.set_multithreading_enabled (retrograd's engine is single-threaded)
    multithreading = True
    # innermost pair last; see retrograd.autograd.graph.saved_tensors_hooks
    saved_hooks: tuple = ()
    saved_hooks_disabled_msg: str | None = None
    # the graph task currently running backward on this thread (None outside backward)
    graph_task = None
    current_node = None
    # nested backward calls on this thread (NOTE [Deep reentrant backward] in engine.py)
    backward_depth = 0
    # the compiler is capturing a backward that nothing differentiates again (its compiled
    # form is once_differentiable): formulas may record their fused, non-differentiable ops
    first_order_capture = False
    # grad mode outside the innermost running __torch_dispatch__ of a tensor subclass (None
    # outside any): what overrides.enable_reentrant_dispatch restores
    dispatch_outer_grad: bool | None = None
    # NOTE [Torch function]: DisableTorchFunctionSubclass / DisableTorchFunction are on. Both
    # are on while backward runs its formulas (ops no __torch_function__ sees, as torch's C++
    # formulas); `torch_function_outer` is what the caller of backward had, restored for a
    # custom Function's backward (user code, as in torch)
    torch_function_subclass_off = False
    torch_function_off = False
    torch_function_outer: tuple = (False, False)


state = _State()


def is_grad_enabled() -> bool:
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return state.inference

# Every active dispatch mode of every thread (retrograd._ops.dispatch.mode_stack, NOTE
# [Per-thread dispatch modes]): kept here, below Tensor, so Tensor's conversions to Python can
# test it as one global list.
mode_stack: list = []
