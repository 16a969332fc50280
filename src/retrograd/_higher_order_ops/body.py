"""What cond and while_loop share: running a user function as an op's body under torch's
rules for traced bodies, and the node their outputs get.

NOTE [Higher-order op bodies]
torch traces a body function and refuses one that mutates its inputs or returns a tensor that
aliases one (its compiled graph could not honour either); here the body runs for real, so the
same refusals are checked after it runs: the inputs' version counters for mutation, memory
overlap for aliasing. Outputs are tensors or ints. They then pass through an identity node
named as torch's (CondAutogradOpBackward, ...): its outputs are copies (so none aliases the
body's values), its gradient is the identity onto the body's own history, which reaches
closed-over tensors too (torch lifts those as extra inputs). A tensor the body that ran does
not use gets no gradient; torch, which traced both of cond's branches, gives zeros to one that
only the other branch uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from retrograd._autograd.state import state
from retrograd._tensor import Tensor
from retrograd.autograd.function import Function
from retrograd.utils._pytree import tree_flatten, tree_unflatten


class UncapturedHigherOrderOpError(RuntimeError):
    """A body function breaks a rule of traced bodies (torch._dynamo.exc's name)."""


def hop_error(op: str, headline: str, explanation: str = "",
              hint: str = "") -> UncapturedHigherOrderOpError:
    """torch's refusal of a body, laid out as torch lays it out: the headline, the operator,
    then the explanation and hint when there are any."""
    lines = [headline, f"  Higher Order Operator: torch.{op}"]
    if explanation:
        lines.append(f"  Explanation: {explanation}")
    if hint:
        lines.append(f"  Hint: {hint}")
    return UncapturedHigherOrderOpError("\n".join(lines))


def aliasing_error(op: str) -> UncapturedHigherOrderOpError:
    return hop_error(op, "Encountered aliasing during higher order op tracing",
                     "Higher order ops do not support aliasing.",
                     "Replace `return input` with `return input.clone()` to avoid aliasing.")


def mutation_error(op: str) -> UncapturedHigherOrderOpError:
    return hop_error(op, "Encountered input mutation during higher order op tracing",
                     "Higher order ops do not support input mutation.")


def tensors_in(tree: Any) -> list[Tensor]:
    return [leaf for leaf in tree_flatten(tree)[0] if isinstance(leaf, Tensor)]


def run_body(op: str, fn: Callable, args: Sequence) -> tuple[list, Any]:
    """fn(*args) under the rules of NOTE [Higher-order op bodies]; returns the output's leaves
    and its tree spec."""
    inputs = tensors_in(args)
    versions = [t._version for t in inputs]
    out = fn(*args)
    if any(t._version != v for t, v in zip(inputs, versions)):
        raise mutation_error(op)
    leaves, spec = tree_flatten(out)
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            data = leaf._data
            if any(np.may_share_memory(data, t._data) for t in inputs):
                raise aliasing_error(op)
        elif not isinstance(leaf, int):
            raise hop_error(op, f"torch.{op}: unsupported branch return type (constant "
                            "non-int)", "Constants returned from branches must be ints, got "
                            f"{type(leaf).__name__}.")
    return leaves, spec


class _BodyOutputs(Function):
    """The identity node of NOTE [Higher-order op bodies]; subclasses give it torch's names."""

    @staticmethod
    def forward(ctx: Any, *tensors: Tensor) -> tuple:
        outs = tuple(t.clone() for t in tensors)
        ctx.mark_non_differentiable(*[o for o in outs if not o.is_floating_point()])
        return outs

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple:
        return grads


class CondAutogradOp(_BodyOutputs):
    pass


class WhileLoopAutogradOp(_BodyOutputs):
    pass


def finish(node: type[_BodyOutputs], leaves: list, spec: Any, operands: list[Tensor]) -> Any:
    """The body's output tree with its tensors passed through `node`. With no gradient to
    record they stay as they are, but for an operand itself (a loop that never ran), which is
    copied: an output never shares memory with an input."""
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor)]
    tensors = [leaves[i] for i in positions]
    if state.grad_enabled and any(t.requires_grad for t in tensors):
        outs = node.apply(*tensors)
    else:
        outs = tuple(t.detach().clone() if any(t is o for o in operands) else t
                     for t in tensors)
    leaves = list(leaves)
    for i, out in zip(positions, outs):
        leaves[i] = out
    return tree_unflatten(leaves, spec)
