"""Tensor._view_func / _view_func_unsafe: replay how a view was made, on another base.

With view replay forced (autograd._force_original_view_tracking(True)) the view's recorded view
ops run again on the new base; their SymInt arguments pass through symint_visitor_fn and their
tensor arguments through tensor_visitor_fn first (the recorded values stay as they were).
Otherwise the view's geometry is laid over the new base with as_strided. A tensor that is not a
view gives None, and so does the checked form when the new base's storage holds a different
number of elements than the view's base.
"""

from __future__ import annotations

from collections.abc import Callable

from retrograd._ops.registry import register_method
from retrograd._tensor import Tensor


def _visit(op, rest: tuple, symint_fn: Callable | None, tensor_fn: Callable | None) -> tuple:
    """The view op's arguments after self, with the visitors applied where their types say."""
    if symint_fn is None and tensor_fn is None:
        return rest
    out = []
    for a, value in zip(op.schema.args[1:], rest):
        if value is None:
            pass
        elif a.symint and symint_fn is not None:
            value = ([symint_fn(v) for v in value] if a.type.startswith("int[]")
                     else symint_fn(value))
        elif a.is_tensor and tensor_fn is not None:
            value = tensor_fn(value)
        out.append(value)
    return tuple(out)


def _storage_numel(t: Tensor) -> int:
    return t.untyped_storage().nbytes() // t.element_size()


def _replay(self: Tensor, new_base: Tensor, symint_visitor_fn: Callable | None,
            tensor_visitor_fn: Callable | None, checked: bool):
    from retrograd._autograd.copy_slices import ViewRecovery
    from retrograd._ops.registry import run

    info = self._view
    if info is None:
        return None
    if checked and _storage_numel(new_base) != _storage_numel(info.base):
        return None
    if not ViewRecovery.replay:
        return new_base.as_strided(self.size(), self.stride(), self.storage_offset())
    out = new_base
    for op, rest in info.replay:
        out = run(op, (out,) + _visit(op, rest, symint_visitor_fn, tensor_visitor_fn))
    return out


def view_func(self: Tensor, new_base: Tensor, symint_visitor_fn: Callable | None = None,
              tensor_visitor_fn: Callable | None = None):
    return _replay(self, new_base, symint_visitor_fn, tensor_visitor_fn, True)


def view_func_unsafe(self: Tensor, new_base: Tensor, symint_visitor_fn: Callable | None = None,
                     tensor_visitor_fn: Callable | None = None):
    return _replay(self, new_base, symint_visitor_fn, tensor_visitor_fn, False)


register_method("_view_func", view_func)
register_method("_view_func_unsafe", view_func_unsafe)
