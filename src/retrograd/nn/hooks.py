"""Module backward hooks: gradients with respect to a module's inputs and outputs.

A module's full backward hooks need the gradients of its (tensor) inputs and outputs, which no
single node of the graph holds. As in torch, the module's tensor inputs and outputs are passed
through an identity autograd Function (`BackwardHookFunction`, node `BackwardHookFunctionBackward`)
and hooks on those two nodes collect the gradients:

- the output node runs first in backward: its post-hook records grad_output (after the user's
  backward pre-hooks, which may replace it);
- the input node runs once all of the module's gradient has reached the inputs: its post-hook
  calls the user's backward hooks with (module, grad_input, grad_output); a hook may return a
  replacement grad_input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor
from retrograd.autograd import Function

__all__ = ["BackwardHook", "BackwardHookFunction"]

NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See "
    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
    "#torch.nn.Module.register_full_backward_hook for more details."
)


class BackwardHookFunction(Function):
    """Identity on tensors; its node is where module backward hooks attach."""

    @staticmethod
    def forward(ctx: Any, *args: Tensor) -> tuple:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        return grads


def _spread(positions: Sequence[int], values: Sequence, size: int) -> tuple:
    """A `size`-tuple with `values` at `positions` and None elsewhere."""
    out = [None] * size
    for i, v in zip(positions, values):
        out[i] = v
    return tuple(out)


def _wrap_tensors(args: tuple) -> tuple[tuple, list[int] | None, Any]:
    """Pass the tensors of `args` through BackwardHookFunction.

    Returns (new args, positions of the tensors, the function's node), or (args, None, None)
    when no tensor needs grad (then no node is made and the hooks on this side do not fire).
    """
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if not (retrograd.is_grad_enabled() and any(args[i].requires_grad for i in positions)):
        return args, None, None
    wrapped = BackwardHookFunction.apply(*(args[i] for i in positions))
    node = next(t.grad_fn for t in wrapped if t.grad_fn is not None)
    items = list(args)
    for i, t in zip(positions, wrapped):
        items[i] = t
    new_args = tuple(items) if type(args) is tuple else type(args)(*items)
    return new_args, positions, node


class BackwardHook:
    """The backward hooks of one module call (made by Module.__call__ when hooks exist)."""

    def __init__(self, module: Any, user_hooks: list[Callable],
                 user_pre_hooks: list[Callable]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = -1
        self.input_positions: list[int] | None = None
        self.frozen_inputs: dict[int, Tensor] = {}  # position -> input not requiring grad
        self.n_outputs = -1
        self.output_positions: list[int] | None = None

    # --- forward: wrap inputs and outputs --------------------------------------------------------
    def setup_input_hook(self, args: tuple) -> tuple:
        new_args, positions, node = _wrap_tensors(args)
        self.n_inputs = len(args)
        self.input_positions = positions
        if node is not None:
            self.frozen_inputs = {i: args[i] for i in positions if not args[i].requires_grad}
            node.register_hook(self._on_input_grads)
        return new_args

    def setup_output_hook(self, result: Any) -> Any:
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        new_outs, positions, node = _wrap_tensors(outs)
        self.n_outputs = len(outs)
        self.output_positions = positions
        if node is not None:
            node.register_hook(self._on_output_grads)
        return new_outs[0] if single else new_outs

    # --- backward -------------------------------------------------------------------------------
    def _on_output_grads(self, grad_inputs: tuple, grad_outputs: tuple) -> tuple:
        # the node's incoming gradients (None where an output got none) are the module's
        # grad_output; what this returns replaces what the identity node passes on, except
        # where it passes nothing on (an input that needs no gradient): a node hook may not
        # fill such a slot
        self.grad_outputs = _spread(self.output_positions, grad_outputs, self.n_outputs)
        self._run_pre_hooks()
        grad_outputs = self.grad_outputs
        if self.input_positions is None:
            self._fire_without_inputs()
        return tuple(None if old is None else grad_outputs[i]
                     for i, old in zip(self.output_positions, grad_inputs))

    def _run_pre_hooks(self) -> None:
        expected = len(self.grad_outputs)
        for hook in self.user_pre_hooks:
            out = hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != expected:
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(out)}, but expected {expected}")
            self.grad_outputs = out

    def _fire_without_inputs(self) -> None:
        """No input needs grad: the hooks see all-None grad_input and must not replace it."""
        _ws.warn(NO_INPUT_GRAD_WARNING, UserWarning, stacklevel=2)
        grad_inputs = (None,) * self.n_inputs
        for hook in self.user_hooks:
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is not None and not (isinstance(res, tuple) and
                                        all(r is None for r in res)):
                raise RuntimeError("Backward hook for Modules where no input requires "
                                   "gradient should always return None or None for all "
                                   "gradients.")
        self.grad_outputs = None

    def _on_input_grads(self, grad_inputs: tuple, _grad_outputs: tuple) -> tuple | None:
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the outputs
            return None
        res = _spread(self.input_positions, grad_inputs, self.n_inputs)
        if self.frozen_inputs:
            # torch's identity node materializes the (never received) gradient of an input
            # that needs none as zeros and hands it to the hooks
            frozen = self.frozen_inputs
            res = tuple(retrograd.zeros_like(frozen[i]) if i in frozen else g
                        for i, g in enumerate(res))
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(None if old is None else res[i]
                     for i, old in zip(self.input_positions, grad_inputs))
