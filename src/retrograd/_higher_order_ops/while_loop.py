"""torch.while_loop(cond_fn, body_fn, carried_inputs): carried = body_fn(*carried) while
cond_fn(*carried) holds. Each step runs as a higher-order op's body (NOTE [Higher-order op
bodies]) and must give back values like the carried ones (same count, shapes and dtypes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd import _dtype as D
from retrograd._higher_order_ops.body import (
    WhileLoopAutogradOp,
    finish,
    hop_error,
    run_body,
    tensors_in,
)
from retrograd._tensor import Tensor
from retrograd.utils._pytree import tree_flatten, tree_unflatten

_OP = "while_loop"


def _validate(cond_fn: Callable, body_fn: Callable, carried_inputs: Any) -> None:
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    leaves = tree_flatten(carried_inputs)[0]
    if any(not isinstance(leaf, (Tensor, int)) for leaf in leaves):
        raise AssertionError(f"{leaves} can only be of (<class 'retrograd.Tensor'>, <class "
                             f"'int'>) but got ({', '.join(map(_class, leaves))})")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError("Expect carried_inputs to be a tuple of possibly nested "
                           "dict/list/tuple that onlyconsists of tensor or int leaves, but got "
                           f"{carried_inputs}.")


def _class(value: Any) -> str:
    name = "retrograd.Tensor" if isinstance(value, Tensor) else type(value).__qualname__
    return f"<class '{name}'>"


def _keep_going(value: Any) -> bool:
    if isinstance(value, bool):
        if value:  # a constant True never stops
            raise hop_error(_OP, "torch.while_loop: infinite loop detected",
                            "Infinite loop detected because while_loop's cond_fn always returns "
                            "the same value True.")
        return False
    if not (isinstance(value, Tensor) and value.dim() == 0 and value.dtype is D.bool):
        shape = value.shape if isinstance(value, Tensor) else type(value).__name__
        raise hop_error(_OP, "torch.while_loop: unsupported cond_fn return type",
                        f"Expected cond_fn to return a scalar tensor or a bool but got {shape}.")
    return bool(value)


def _check_step(new: list, old: list) -> None:
    """The body's outputs (lhs) against the carried values (rhs), as torch compares them."""
    if len(new) != len(old):
        raise hop_error(_OP, "Expected body_fn_output and carried_inputs to have same number "
                             f"of outputs but got lhs:{new} and rhs:{old}")
    for i, (a, b) in enumerate(zip(new, old)):
        if isinstance(a, Tensor) != isinstance(b, Tensor):
            differ = f"type: {type(a).__name__} vs {type(b).__name__}"
        elif not isinstance(a, Tensor):
            continue
        elif a.dtype != b.dtype:
            differ = f"dtype: {a.dtype} vs {b.dtype}"
        elif a.shape != b.shape:
            differ = f"shape: {a.shape} vs {b.shape}"
        else:
            continue
        raise hop_error(_OP, "Expected body_fn_output and carried_inputs to have same "
                             f"metadata but found:\npair[{i}] differ in '{differ}', where lhs "
                             f"is {a} and rhs is {b}")


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: tuple | list) -> Any:
    """Run body_fn on the carried values while cond_fn says so; the final carried values, in
    the structure body_fn returns them (the inputs' when it never ran), as torch's."""
    _validate(cond_fn, body_fn, carried_inputs)
    leaves, in_spec = tree_flatten(carried_inputs)
    carried: Any = carried_inputs
    out_spec = in_spec
    while _keep_going(cond_fn(*carried)):
        new_leaves, out_spec = run_body(_OP, body_fn, carried)
        _check_step(new_leaves, leaves)
        leaves = new_leaves
        carried = tree_unflatten(leaves, in_spec)  # the next call sees the inputs' structure
    return finish(WhileLoopAutogradOp, leaves, out_spec, tensors_in(carried_inputs))
