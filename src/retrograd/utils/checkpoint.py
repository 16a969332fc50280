"""Activation checkpointing: save inputs only, recompute the forward when backward needs it.

Two strategies, as in PyTorch:
- non-reentrant (use_reentrant=False, recommended): the forward runs under saved-tensor hooks
  that keep only a placeholder per saved tensor; backward recomputes the function to fill them,
  stopping as soon as all are back. Checkpoints nest (NOTE [Nested checkpoint] in
  _checkpoint_frame), take keyword arguments, and a context_fn such as selective checkpointing
  (_selective_checkpoint).
- reentrant (use_reentrant=True): a custom Function whose backward recomputes the function with
  grad enabled and runs a nested backward through it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from retrograd import _warning_site as _ws
from retrograd._autograd.state import state
from retrograd._ops.random import default_generator
from retrograd._tensor import Tensor
from retrograd.amp.autocast_mode import _replay as autocast_replay
from retrograd.amp.autocast_mode import _snapshot as autocast_snapshot
from retrograd.autograd.function import Function
from retrograd.utils._checkpoint_frame import (
    CheckpointError,
    GraphExecGroup,
    checkpoint_without_reentrant,
    noop_context_fn,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)
from retrograd.utils._selective_checkpoint import (  # noqa: F401  (the modes: torch's names)
    SAC_IGNORED_OPS,
    CheckpointPolicy,
    SelectiveCheckpointContext,
    _CachedTorchDispatchMode,
    _CachingTorchDispatchMode,
    create_selective_checkpoint_contexts,
)

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "detach_variable", "check_backward_validity", "get_device_states",
           "set_device_states", "DefaultDeviceType",
           "noop_context_fn", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts",
           "SAC_IGNORED_OPS", "GraphExecGroup"]

USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
SEQUENTIAL_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
REENTRANT_WITH_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)
REENTRANT_CONTEXT_FN = (
    "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
)
NO_INPUT_GRAD = "None of the inputs have requires_grad=True. Gradients will be None"


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    """Run function(*args, **kwargs) without keeping its intermediate tensors for backward;
    backward recomputes them. See the module docstring for the two variants."""
    if use_reentrant is None:
        _ws.warn(USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(REENTRANT_CONTEXT_FN)
        return CheckpointFunction.apply(function, preserve, *args)
    return checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug,
                                        early_stop, args, kwargs)


# --- reentrant ---------------------------------------------------------------------------------


def detach_variable(inputs: tuple) -> tuple:
    """Detached copies of the tensors in `inputs` keeping requires_grad; other items as they
    are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


class DefaultDeviceType:
    """The device type whose RNG state checkpoint stashes: the accelerator's, and with none
    (retrograd runs on the CPU) "cpu"."""

    _default_device_type = "cpu"

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        return DefaultDeviceType._default_device_type


def get_device_states(*args: Any) -> tuple[list, list]:
    """(device ids, RNG states) of the accelerator tensors in args: none on the CPU."""
    return [], []


def set_device_states(devices: list, states: list, *, device_type: str | None = None) -> None:
    """Restore accelerator RNG states (nothing to do on the CPU)."""


def check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(isinstance(a, Tensor) and a.requires_grad for a in inputs):
        _ws.warn(NO_INPUT_GRAD, UserWarning, stacklevel=2)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = default_generator.get_state() if preserve_rng_state else None
        ctx.autocast_state = autocast_snapshot()
        tensor_idx, others = [], []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                tensor_idx.append(i)
                others.append(None)
            else:
                others.append(a)
        ctx.tensor_idx = tensor_idx
        ctx.others = others
        ctx.save_for_backward(*[args[i] for i in tensor_idx])
        check_backward_validity(args)
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        from retrograd.autograd import backward

        task = state.graph_task
        if task is not None and task.exec_info is not None:
            raise RuntimeError(REENTRANT_WITH_GRAD)
        inputs = list(ctx.others)
        for i, t in zip(ctx.tensor_idx, ctx.saved_tensors):
            inputs[i] = t
        inputs = list(detach_variable(tuple(inputs)))
        saved_rng = default_generator.get_state()
        if ctx.rng_state is not None:
            default_generator.set_state(ctx.rng_state)
        prev = state.grad_enabled
        state.grad_enabled = True
        try:
            with autocast_replay(ctx.autocast_state):
                outputs = ctx.run_function(*inputs)
        finally:
            state.grad_enabled = prev
            default_generator.set_state(saved_rng)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in inputs)
        return (None, None) + grads


def checkpoint_sequential(functions: Iterable[Callable] | Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run a sequence of modules/functions in `segments` chunks, checkpointing all but the
    last."""
    from retrograd.nn import Sequential

    if use_reentrant is None:
        _ws.warn(SEQUENTIAL_USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)

    def run_function(start: int, end: int, fns) -> Callable:
        def forward(x):
            for j in range(start, end + 1):
                x = fns[j](x)
            return x

        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
