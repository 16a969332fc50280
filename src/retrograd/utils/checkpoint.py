"""Activation checkpointing: save inputs only, recompute the forward when backward needs it.

Two strategies, as in PyTorch:
- non-reentrant (use_reentrant=False, recommended): the forward runs under saved-tensor hooks
  whose pack keeps only a position; the first unpack re-runs the function (same RNG state) and
  collects what it saves, in the same order. Unlike PyTorch, a checkpointed saved tensor can be
  unpacked more than once (the recomputed values live until the graph is freed).
- reentrant (use_reentrant=True): a custom Function whose backward recomputes the function with
  grad enabled and runs a nested backward through it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from retrograd._autograd.state import state
from retrograd._ops.random import default_generator
from retrograd._tensor import Tensor
from retrograd.autograd.function import Function
from retrograd.autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential"]

USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
REENTRANT_WITH_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)
NO_INPUT_GRAD = "None of the inputs have requires_grad=True. Gradients will be None"
RECOMPUTE_MISMATCH = (
    "torch.utils.checkpoint: Recomputed values for the following tensors have different "
    "metadata than during the forward pass."
)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable | None = None, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs)


# --- reentrant ---------------------------------------------------------------------------------


class _CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = default_generator.get_state() if preserve_rng_state else None
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
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn(NO_INPUT_GRAD, UserWarning, stacklevel=4)
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        from retrograd.autograd import backward

        task = state.graph_task
        if task is not None and task.exec_info is not None:
            raise RuntimeError(REENTRANT_WITH_GRAD)
        inputs = list(ctx.others)
        for i, t in zip(ctx.tensor_idx, ctx.saved_tensors):
            d = t.detach()
            d.requires_grad = t.requires_grad
            inputs[i] = d
        saved_rng = default_generator.get_state()
        if ctx.rng_state is not None:
            default_generator.set_state(ctx.rng_state)
        prev = state.grad_enabled
        state.grad_enabled = True
        try:
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


# --- non-reentrant -----------------------------------------------------------------------------


class _Frame:
    """One checkpointed call: how to recompute it, and what the recomputation saved."""

    def __init__(self, function: Callable, args: tuple, kwargs: dict, rng_state: Any) -> None:
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.metadata: list = []  # (shape, dtype) of each tensor saved in forward
        self.recomputed: list | None = None

    def recompute(self) -> None:
        recomputed: list = []

        def pack(t: Tensor):
            recomputed.append(t.detach())
            return None

        saved_rng = default_generator.get_state() if self.rng_state is not None else None
        if self.rng_state is not None:
            default_generator.set_state(self.rng_state)
        prev = state.grad_enabled
        state.grad_enabled = True
        try:
            with saved_tensors_hooks(pack, lambda _: None):
                self.function(*self.args, **self.kwargs)
        finally:
            state.grad_enabled = prev
            if saved_rng is not None:
                default_generator.set_state(saved_rng)
        got = [(tuple(t.shape), t.dtype) for t in recomputed[:len(self.metadata)]]
        if len(recomputed) < len(self.metadata) or got != self.metadata:
            raise RuntimeError(RECOMPUTE_MISMATCH + f"\nsaved in forward: {self.metadata}\n"
                               f"recomputed: {got}")
        self.recomputed = recomputed


class _Holder:
    __slots__ = ("frame", "index")

    def __init__(self, frame: _Frame, index: int) -> None:
        self.frame = frame
        self.index = index


def _checkpoint_without_reentrant(function: Callable, preserve_rng_state: bool, args: tuple,
                                  kwargs: dict) -> Any:
    rng = default_generator.get_state() if preserve_rng_state else None
    frame = _Frame(function, args, kwargs, rng)

    def pack(t: Tensor) -> _Holder:
        frame.metadata.append((tuple(t.shape), t.dtype))
        return _Holder(frame, len(frame.metadata) - 1)

    def unpack(holder: _Holder) -> Tensor:
        f = holder.frame
        if f.recomputed is None:
            f.recompute()
        return f.recomputed[holder.index]

    with saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions: Iterable[Callable] | Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run a sequence of modules/functions in `segments` chunks, checkpointing all but the
    last."""
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    functions = list(functions)

    def run_function(start: int, end: int, fns: list) -> Callable:
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
                           use_reentrant=use_reentrant, **kwargs)
    return run_function(end + 1, len(functions) - 1, functions)(input)
