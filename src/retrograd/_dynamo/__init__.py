"""retrograd._dynamo: torch._dynamo's names for programs that compile: marks of dynamic and
static dimensions, read by retrograd.compile when it makes a variant (NOTE [Dynamic shapes]),
`config`, and the calls shared with retrograd.compiler (is_compiling, disable, set_stance,
list_backends; NOTE in _compiler/tracing.py).

mark_dynamic(t, dims)        these dimensions are symbols, under every `dynamic` setting; if
                             they cannot stay symbols because the function fixes their size,
                             compiling raises ConstraintViolationError
maybe_mark_dynamic(t, dims)  symbols when they can be, else fixed without an error
mark_static(t, dims=None)    these (or all) dimensions keep their sizes, even with
                             dynamic=True or after they change
mark_static_address(t)       accepted: it tells CUDA graphs a tensor keeps its address
reset()                      retrograd.compiler.reset()
graph_break()                under capture, the call runs eagerly (one graph or none)
"""

from __future__ import annotations

from typing import Any

from retrograd._compiler.api import reset as _reset
from retrograd._compiler.backends import list_backends
from retrograd._compiler.stance import set_stance
from retrograd._compiler.tracing import (
    allow_in_graph,
    assume_constant_result,
    disable,
    graph_break,
    is_compiling,
)
from retrograd._dynamo import config, eval_frame, exc
from retrograd._dynamo.eval_frame import OptimizedModule

__all__ = ["OptimizedModule", "allow_in_graph", "assume_constant_result", "config", "disable",
           "graph_break", "is_compiling", "list_backends", "mark_dynamic", "mark_static",
           "mark_static_address", "maybe_mark_dynamic", "reset", "set_stance"]


def _dims(index: Any) -> list:
    return [index] if isinstance(index, int) else list(index)


def _marks(t: Any) -> dict:
    meta = t._get_meta()
    if meta.shape_marks is None:
        meta.shape_marks = {"dynamic": set(), "weak": set(), "static": set(), "range": {}}
    return meta.shape_marks


def mark_dynamic(t: Any, index: int | list | tuple, *, hint_override: int | None = None,
                 min: int | None = None, max: int | None = None,  # noqa: A002
                 specialize_on: list | None = None) -> None:
    """Make dimension(s) `index` of `t` symbols in the variants compiled for calls with it.
    `min`/`max` bound the sizes a call may have (ConstraintViolationError otherwise);
    `hint_override` and `specialize_on` are accepted for torch's signature (sizes are not
    tuned here, and every size runs the one variant)."""
    marks = _marks(t)
    for d in _dims(index):
        marks["dynamic"].add(d)
        if min is not None or max is not None:
            marks["range"][d] = (2 if min is None else min, max)


def maybe_mark_dynamic(t: Any, index: int | list | tuple) -> None:
    """Like mark_dynamic, but a dimension the function fixes stays fixed without an error."""
    marks = _marks(t)
    for d in _dims(index):
        marks["weak"].add(d)


def mark_static(t: Any, index: int | list | tuple | None = None) -> None:
    """Keep dimension(s) `index` of `t` (all of them when None) at their sizes: a call with
    another size compiles a variant of its own."""
    marks = _marks(t)
    marks["static"].update(range(t.dim()) if index is None else _dims(index))


def mark_static_address(t: Any, guard: bool = True) -> None:
    """Accepted for torch's signature: it keeps CUDA graphs from copying `t` into a static
    buffer, and retrograd has no CUDA graphs (its compiled code reads arguments in place)."""


def reset() -> None:
    """torch._dynamo.reset(): retrograd.compiler.reset()."""
    _reset()
