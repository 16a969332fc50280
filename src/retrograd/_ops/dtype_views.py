"""Tensor.view(dtype): the same memory read as another dtype.

As torch's view.dtype, the result shares its source's storage and version counter but is no
autograd view and never requires grad (torch declares the op non-differentiable, even for its
own dtype): writes through it bump the source's version, so a saved source still refuses to
unpack. Between dtypes of different sizes the last dimension is regrouped, with torch's checks
(in its order) on what can be regrouped."""

from __future__ import annotations

from retrograd import _dtype as D
from retrograd._ops import dispatch
from retrograd._tensor import Tensor, _wrap


def _refuse(what: str, src: D.dtype, dst: D.dtype, got=None) -> RuntimeError:
    tail = "" if got is None else f", but got {got}"
    return RuntimeError(f"{what} to view {D.legacy_name(src)} as {D.legacy_name(dst)} "
                        f"(different element sizes){tail}")


def _check_regrouping(t: Tensor, src: D.dtype, dst: D.dtype) -> None:
    """torch's conditions for reading a tensor's last dimension in elements of another size."""
    if t.dim() == 0:
        raise _refuse("self.dim() cannot be 0", src, dst)
    strides = t.stride()
    if src.itemsize > dst.itemsize:
        if strides[-1] != 1:
            raise _refuse("self.stride(-1) must be 1", src, dst, strides[-1])
        return
    ratio = dst.itemsize // src.itemsize
    size = t.shape[-1]
    if size % ratio:
        raise _refuse(f"self.size(-1) must be divisible by {ratio}", src, dst, size)
    offset = t.storage_offset()
    if offset % ratio:
        raise _refuse(f"self.storage_offset() must be divisible by {ratio}", src, dst, offset)
    if strides[-1] != 1:
        raise _refuse("self.stride(-1) must be 1", src, dst, strides[-1])
    for i, s in enumerate(strides[:-1]):
        if s % ratio:
            raise _refuse(f"self.stride({i}) must be divisible by {ratio}", src, dst, s)


def view_dtype(t: Tensor, dtype: D.dtype) -> Tensor:
    """t's memory as `dtype` (see the module's docstring)."""
    if dispatch.mode_stack:  # a tracer records ops; this is a reinterpretation of memory
        dispatch.uncapturable("Tensor.view(dtype)")
    src = t.dtype
    if src.itemsize != dtype.itemsize:
        _check_regrouping(t, src, dtype)
    arr = t._data.view(dtype.np)
    out = _wrap(arr)
    out._version_counter = t._version_counter
    if arr.size:  # the storage is the source's, whole (an empty one holds no memory)
        out._get_meta().storage_from = t
    return out
