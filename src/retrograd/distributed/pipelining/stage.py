"""PipelineStage: one stage's module and the per-microbatch state its actions need."""

from __future__ import annotations

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
    The last stage's output goes to the schedule's loss function.
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

    def forward(self, mb: int, value: Tensor, target: Any = None, loss_fn: Any = None) -> Tensor:
        if not self.is_first:
            value = value.detach().requires_grad_(value.is_floating_point())
        self.inputs[mb] = value
        prev = state.grad_enabled
        state.grad_enabled = True
        try:
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
            stage_backward(out, grad, [])
            return
        stage_backward_weight(self.parameters(), self.param_groups.pop(mb))
