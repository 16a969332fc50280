"""PipelineStage: one stage's module and the per-microbatch state its actions need."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from retrograd._autograd.state import state
from retrograd._tensor import Tensor
from retrograd.distributed.pipelining._backward import (
    stage_backward,
    stage_backward_input,
    stage_backward_weight,
)


class PipelineStage:
    """Stage `stage_index` of `num_stages`, running `submodule`.

    The first stage takes the microbatch; every other stage takes the previous stage's output.
    The last stage's output goes to the schedule's loss function. `group` is the pipeline's
    process group (default: the world): stage i runs on the group's rank i, so several pipelines
    can run side by side, e.g. data-parallel replicas of a whole pipeline.

    NOTE [Pipeline stage under DDP]
    A stage whose module is a DistributedDataParallel (over the stage's data-parallel group)
    runs its forwards and all but its last backward of a step under no_sync, so gradients
    accumulate locally over the microbatches; before the step's last backward it arms the
    reducer, whose hooks then all-reduce the accumulated gradient once. Every replica of a
    stage runs the same action list, so the all-reduces line up.
    """

    def __init__(self, submodule: Any, stage_index: int, num_stages: int, device: Any = None,
                 input_args: Any = None, output_args: Any = None, group: Any = None,
                 dw_builder: Any = None) -> None:
        if not 0 <= stage_index < num_stages:
            raise ValueError(f"Stage index {stage_index} is out of range of {num_stages}")
        self.submod = submodule
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group = group
        self.inputs: dict = {}  # microbatch -> input tensor (leaf requiring grad unless first)
        self.outputs: dict = {}  # microbatch -> output (or loss on the last stage)
        self.output_grads: dict = {}  # microbatch -> gradient received for the output
        self.input_grads: dict = {}  # microbatch -> gradient to send back
        self.param_groups: dict = {}  # microbatch -> weight-pass state
        self.losses: dict = {}
        self.n_microbatches = 0  # set by the schedule's step; the last backward syncs DDP
        self._backwards_done = 0

    @property
    def is_first(self) -> bool:
        return self.stage_index == 0

    @property
    def is_last(self) -> bool:
        return self.stage_index == self.num_stages - 1

    def parameters(self) -> list:
        return list(self.submod.parameters())

    def clear(self) -> None:
        for d in (self.inputs, self.outputs, self.output_grads, self.input_grads,
                  self.param_groups, self.losses):
            d.clear()
        self._backwards_done = 0

    def _ddp_reducer(self) -> Any:
        # duck-typed: DistributedDataParallel lives in retrograd.nn, above this layer
        return getattr(self.submod, "reducer", None) if hasattr(self.submod, "no_sync") else None

    def _completing_backward(self, out: Any) -> Any:
        """Context for a backward that finishes a microbatch's weight gradients: the step's
        last one arms DDP's reducer (see NOTE [Pipeline stage under DDP]), the others run
        under no_sync."""
        reducer = self._ddp_reducer()
        if reducer is None:
            return nullcontext()
        self._backwards_done += 1
        if self._backwards_done == self.n_microbatches:
            reducer.prepare_for_backward(out)
            return nullcontext()
        return self.submod.no_sync()

    def forward(self, mb: int, value: Tensor, target: Any = None, loss_fn: Any = None) -> Tensor:
        if not self.is_first:
            value = value.detach().requires_grad_(value.is_floating_point())
        self.inputs[mb] = value
        prev = state.grad_enabled
        state.grad_enabled = True
        try:
            with self.submod.no_sync() if self._ddp_reducer() is not None else nullcontext():
                out = self.submod(value)
            if self.is_last and loss_fn is not None:
                loss = loss_fn(out, target)
                self.losses[mb] = loss
                out = loss
        finally:
            state.grad_enabled = prev
        self.outputs[mb] = out
        return out

    def backward(self, mb: int) -> None:
        """Full backward (B): weight grads accumulate, the input grad is kept to send."""
        out = self.outputs.pop(mb)
        grad = None if self.is_last else self.output_grads.pop(mb)
        inp = self.inputs.pop(mb)
        with self._completing_backward(out):
            (g,) = stage_backward(out, grad, [inp])
        self.input_grads[mb] = g

    def backward_input(self, mb: int) -> None:
        """Input pass (I). The first stage has no input gradient to compute: its whole backward
        runs in the weight pass."""
        if self.is_first:
            return
        out = self.outputs.pop(mb)
        grad = None if self.is_last else self.output_grads.pop(mb)
        inp = self.inputs.pop(mb)
        grads, groups = stage_backward_input([out], None if grad is None else [grad], [inp],
                                             self.parameters())
        self.param_groups[mb] = groups
        self.input_grads[mb] = grads[0] if grads else None

    def backward_weight(self, mb: int) -> None:
        """Weight pass (W)."""
        if self.is_first:
            out = self.outputs.pop(mb)
            grad = None if self.is_last else self.output_grads.pop(mb)
            self.inputs.pop(mb)
            with self._completing_backward(out):
                stage_backward(out, grad, [])
            return
        if self._ddp_reducer() is not None:
            raise NotImplementedError("a split (zero-bubble) backward of a stage wrapped in "
                                      "DistributedDataParallel is not supported")
        stage_backward_weight(self.parameters(), self.param_groups.pop(mb))
