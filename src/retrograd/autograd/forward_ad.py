"""Forward-mode AD with torch's API: dual levels, make_dual, unpack_dual.

A dual tensor carries a tangent at a level; every op run inside the level pushes the tangents
forward (NOTE [Forward-mode derivatives]). As in torch, one level can be active at a time.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from retrograd._ops import forward_ad as _fw
from retrograd._ops.shape import alias as _alias
from retrograd._ops.subclass import is_wrapper
from retrograd._ops.tangent_meta import new_zeros_with_same_feature_meta, storage_numel
from retrograd._tensor import Tensor

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


def _current() -> int:
    return _fw.current_level()


def enter_dual_level() -> int:
    """Enter a new forward grad level; it becomes the default level of make_dual/unpack_dual."""
    return _fw.enter_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the last entered level, deleting every tangent made at it."""
    if level is None:
        level = _current()
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _fw.exit_level(level)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of `tensor` carrying `tangent` as its forward gradient at `level`."""
    if level is None:
        level = _current()
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    lv = _fw.level_of(level)
    if lv is None:
        raise RuntimeError("Invalid level given to _make_dual")
    if _fw.tangent_of(tensor, lv) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if _fw.tangent_of(tangent, lv) is not None:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the "
                           f"same level{level} is not supported.")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    with _fw.suspended():
        # an alias, as torch's make_dual takes: a __torch_dispatch__ class sees aten.alias
        dual = _alias(tensor) if is_wrapper(tensor) else tensor.view(tuple(tensor.shape))
        if _whole_row_major(tensor) and _whole_row_major(tangent):
            pass  # the common call: laid out alike by construction, nothing to check
        elif is_wrapper(tangent):
            if tangent.stride() != tensor.stride() and tensor.numel() > 1:
                # a copy as well, laid out as the wrapper's class lays out its values (a
                # batched tangent under vmap: per example as its primal, torch's test)
                tangent = tangent.clone()
        elif tensor.numel() > 0 and not _same_layout(tangent, tensor):
            # the tangent is laid out as its primal, over a storage as large as the
            # primal's, in the primal's dtype, as torch does: views of the dual then view the
            # tangent alike
            laid = new_zeros_with_same_feature_meta(tangent, tensor)
            laid.copy_(tangent)
            tangent = laid
    _fw.set_tangent(dual, tangent, lv)
    return dual


def _whole_row_major(t: Tensor) -> bool:
    """A plain tensor that is its whole storage, row-major from its start: two of the same
    shape have the same strides, storage offset (0) and storage size."""
    return (t.__class__ is Tensor and t._view is None and t._meta is None
            and t._data.flags.c_contiguous)


def _same_layout(tangent: Tensor, primal: Tensor) -> bool:
    """Same strides (where more than one element makes them matter), storage offset and
    storage size: torch's test before it keeps a tangent as given."""
    if primal.numel() > 1 and tangent.stride() != primal.stride():
        return False
    if tangent.storage_offset() != primal.storage_offset():
        return False
    return storage_numel(tangent) == storage_numel(primal)


class UnpackedDualTensor(NamedTuple):
    """What unpack_dual returns: the primal and the tangent (None if there is none)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal (a view of `tensor` without tangent) and the tangent of `tensor` at `level`."""
    if level is None:
        level = _current()
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    lv = _fw.level_of(level)
    # a custom Function's forward runs with tangents hidden, as in torch
    hidden = lv is None or not _fw.propagating()
    tangent = None if hidden else _fw.tangent_of(tensor, lv)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _fw.suspended():
        primal = tensor.view(tuple(tensor.shape))
    _fw.set_tangent(primal, None, lv)
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager (and decorator) in which forward AD computations happen: it enters a
    level on entry and exits it, deleting its tangents, on exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapped


def _is_fwd_grad_enabled() -> bool:
    return _fw._enabled[0]


class _set_fwd_grad_enabled:
    """Turn tangent propagation off (or on) until exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = _fw._enabled[0]
        _fw._enabled[0] = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _fw._enabled[0] = self.prev


def __getattr__(name: str) -> Any:
    if name == "_current_level":  # torch keeps the level index as a module global
        return _current()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
