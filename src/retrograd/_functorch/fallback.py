"""The batching rule of last resort: run the op once per batch member and stack the results
(NOTE [Batching rules]). Correct for any op, slow, and said so with torch's warning."""

from __future__ import annotations

from typing import Any

from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor

SLOW_FALLBACK = (
    "There is a performance drop because we have not yet implemented the batching rule for "
    "{}. Please file us an issue on GitHub so that we can prioritize its implementation.")


def _op_name(func: Any) -> str:
    name = func.name() if hasattr(func, "name") else str(func)
    return name if name.startswith("aten::") else "aten::" + name


def stack_results(outs: list) -> Any:
    from retrograd._ops.shape import stack

    first = outs[0]
    if isinstance(first, Tensor):
        return stack(outs, 0)
    if isinstance(first, (tuple, list)):
        return type(first)(stack_results([o[k] for o in outs]) for k in range(len(first)))
    return first


def fallback(func: Any, args: tuple, level: int) -> Any:
    """func(*args) as a loop over the batch of `level`."""
    from retrograd._functorch.batch_rules import (
        INPLACE_BATCHED_INTO_UNBATCHED,
        _batch_size,
        _batched,
        wrap,
    )

    _ws.warn(SLOW_FALLBACK.format(_op_name(func)), UserWarning, stacklevel=2)
    op = getattr(func, "_op", None)
    written = op.inplace_idx if op is not None else ()
    for i in written:
        if not _batched(args[i], level):
            raise RuntimeError(INPLACE_BATCHED_INTO_UNBATCHED)
    size = _batch_size(args, level)

    def member(a: Any, k: int) -> Any:
        if _batched(a, level):
            v = a._value
            # a batch of one beside a full batch (an operand broadcast over the batch, as
            # matmul's broadcasting makes one) is the same member for every k
            return v.select(0, k if v.shape[0] != 1 else 0)
        if isinstance(a, (list, tuple)) and any(_batched(t, level) for t in a):
            return type(a)(member(t, k) for t in a)
        return a

    outs = [func(*(member(a, k) for a in args)) for k in range(size)]
    if written:
        return args[written[0]]
    if not outs:
        return outs
    first = outs[0]
    if not (isinstance(first, Tensor) or (isinstance(first, (tuple, list)) and first
                                          and isinstance(first[0], Tensor))):
        return first  # a Python value (a size, a flag): the same for every member
    return wrap(stack_results(outs), level)
