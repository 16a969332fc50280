"""Memory formats: torch.contiguous_format, channels_last, channels_last_3d, preserve_format.

A memory format names an order of strides: channels_last lays an NCHW tensor out as NHWC
(channels vary fastest), channels_last_3d does the same for NCDHW. Tensors keep no format flag;
as in torch, the strides are the format, so NumPy's order-keeping copies and ufuncs (which follow
their input's strides) carry channels_last through clone, empty_like and pointwise ops.

memory_format is a NamedConstant: code that compares a format with its name keeps working.
"""

from __future__ import annotations

import numpy as np

from retrograd._autograd import op_seam
from retrograd._named_constant import NamedConstant


class memory_format(NamedConstant):
    __slots__ = ()
    __module__ = "retrograd"  # shown as retrograd.memory_format, like torch.memory_format


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

_BY_NAME = {str.__str__(f): f for f in (contiguous_format, channels_last, channels_last_3d,
                                        preserve_format)}
# the order in which dims vary from fastest to slowest, by rank
_ORDER = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}
_RANK_ERROR = {channels_last: "required rank 4 tensor to use channels_last format",
               channels_last_3d: "required rank 5 tensor to use channels_last_3d format"}


def as_format(fmt) -> memory_format | None:
    """A memory format argument (None, a format, or its name) as one of the four objects."""
    if fmt is None or fmt.__class__ is memory_format:
        return fmt
    if isinstance(fmt, str) and fmt.split(".")[-1] in _BY_NAME:
        return _BY_NAME[fmt.split(".")[-1]]
    raise TypeError(f"memory_format must be a retrograd.memory_format, not "
                    f"{type(fmt).__name__}")


def is_channels_last(fmt) -> bool:
    return fmt in _ORDER


def format_strides(shape: tuple, fmt: memory_format) -> tuple:
    """Element strides of a dense tensor of `shape` laid out in `fmt` (sizes multiply as they
    are, so a zero size gives zero strides above it, as in torch)."""
    if fmt in _ORDER:
        rank, order = _ORDER[fmt]
        if len(shape) != rank:
            raise RuntimeError(_RANK_ERROR[fmt])
        strides = [0] * rank
        acc = 1
        for d in order:
            strides[d] = acc
            acc *= shape[d]
        return tuple(strides)
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def is_contiguous_as(shape: tuple, strides: tuple, fmt: memory_format) -> bool:
    """torch's channels-last contiguity: size-1 dims are ignored, the others must be dense in
    the format's order. (Standard contiguity is Tensor.is_contiguous's own fast check.)"""
    rank, order = _ORDER[fmt]
    if len(shape) != rank:
        return False
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def empty_array(shape: tuple, np_dtype, fmt: memory_format | None) -> np.ndarray:
    """An uninitialised array laid out in `fmt` (contiguous for None / contiguous_format)."""
    if fmt not in _ORDER:
        return np.empty(shape, np_dtype)
    return op_seam.empty_strided_array(tuple(shape), format_strides(tuple(shape), fmt), np_dtype)


def copy_as(a: np.ndarray, fmt: memory_format | None) -> np.ndarray:
    """A copy of `a` laid out in `fmt`; preserve_format keeps a's layout where it is dense."""
    if fmt is None or fmt is preserve_format:
        return a.copy(order="K")
    out = empty_array(a.shape, a.dtype, fmt)
    np.copyto(out, a)
    return out
