"""torch.cond(pred, true_fn, false_fn, operands): the branch the predicate picks, run on the
operands. A Python predicate just calls the branch (torch's eager path); a tensor predicate runs
its branch as a higher-order op's body (NOTE [Higher-order op bodies])."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd._higher_order_ops.body import CondAutogradOp, finish, run_body, tensors_in
from retrograd._tensor import Tensor
from retrograd.utils._pytree import tree_flatten


def _validate(pred: Any, true_fn: Callable, false_fn: Callable, operands: Any) -> None:
    if not isinstance(pred, (bool, Tensor)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or any(
            not isinstance(leaf, Tensor) for leaf in tree_flatten(operands)[0]):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")


def cond(pred: bool | int | float | Tensor, true_fn: Callable, false_fn: Callable,
         operands: tuple | list = ()) -> Any:
    """true_fn(*operands) if pred else false_fn(*operands)."""
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    _validate(pred, true_fn, false_fn, operands)
    branch = true_fn if bool(pred) else false_fn
    leaves, spec = run_body("cond", branch, operands)
    return finish(CondAutogradOp, leaves, spec, tensors_in(operands))
