"""retrograd.fx.experimental.symbolic_shapes: the error torch raises for a dimension marked
dynamic that the compiled function fixes (NOTE [Dynamic shapes])."""

from __future__ import annotations

__all__ = ["ConstraintViolationError"]


class ConstraintViolationError(RuntimeError):
    """A dimension marked dynamic (retrograd._dynamo.mark_dynamic) cannot stay dynamic, or a
    call's size lies outside the range it was marked with."""
