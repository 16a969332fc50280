"""torch.autograd.Variable: the legacy wrapper, now a constructor of plain Tensors.

`Variable(t, requires_grad=...)` returns a new Tensor sharing t's memory and version counter with
no history (like `t.detach()`), and `isinstance(x, Variable)` is true for every Tensor.
`Variable._execution_engine` is the engine's Python face (queue_callback).
"""

from __future__ import annotations

from typing import Any

from retrograd import _warning_site as _ws
from retrograd._autograd import engine
from retrograd._tensor import Tensor, _wrap

__all__ = ["Variable", "VariableMeta"]

VOLATILE_REMOVED = (
    "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."
)


class VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class _ExecutionEngine:
    """What torch exposes of its C++ engine to Python."""

    @staticmethod
    def queue_callback(callback) -> None:
        """Run callback once the current backward has finished (only during backward)."""
        engine.queue_callback(callback)


class Variable(metaclass=VariableMeta):
    _execution_engine = _ExecutionEngine()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,
                volatile: bool = False, _grad_fn: Any = None, name: str | None = None):
        if volatile:
            _ws.warn(VOLATILE_REMOVED, UserWarning, stacklevel=2)
        if data is None:
            import numpy as np

            from retrograd._dtype import get_default_dtype

            return _wrap(np.empty(0, get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            if not out.is_floating_point():
                raise RuntimeError("Only Tensors of floating point and complex dtype can "
                                   "require gradients")
            out._requires_grad = True
        return out
