"""torch.cond and torch.while_loop (torch._higher_order_ops): control flow on tensor values.

retrograd runs them eagerly: cond runs the branch its predicate picks, while_loop runs its body
while its condition holds, each checked as torch checks the functions it traces (no mutated
inputs, no outputs that alias inputs, a loop body that keeps its carried values' shapes and
dtypes), and their outputs carry torch's node (CondAutogradOpBackward,
WhileLoopAutogradOpBackward) in front of the history the functions recorded.
"""

from retrograd._higher_order_ops.body import UncapturedHigherOrderOpError
from retrograd._higher_order_ops.cond import cond
from retrograd._higher_order_ops.while_loop import while_loop

__all__ = ["cond", "while_loop", "UncapturedHigherOrderOpError"]
