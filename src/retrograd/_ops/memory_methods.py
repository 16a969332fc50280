"""Tensor methods about where memory lives (pinned, shared, which device) for CPU memory."""

from __future__ import annotations

import gc
import sys
from typing import Any

import numpy as np

from retrograd import _shared_memory as shm
from retrograd._ops.registry import register_method
from retrograd._tensor import Tensor, _is_wrapper
from retrograd.storage import UntypedStorage

NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def get_device(self: Tensor) -> int:
    return -1  # torch's answer for CPU tensors


def is_pinned(self: Tensor, device: Any = None) -> bool:
    return False


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    raise RuntimeError(NO_ACCELERATOR)  # pinning is for copies to an accelerator


def is_shared(self: Tensor) -> bool:
    return shm.is_shared(self._data)


def share_memory_(self: Tensor) -> Tensor:
    """Move the memory of self (all of its storage) into a shared segment, in place: every
    tensor and storage that views the same memory is moved with it, so they keep aliasing."""
    a = self._data
    # held by self's slot only (as counted by _lone_count): nothing else can view it
    alone = a.base is None and sys.getrefcount(a) <= _LONE_COUNT
    if _is_wrapper(self) or shm.is_shared(a):
        return self
    root = shm.root_array(a)
    mapping, low = shm.copy_into_segment(root)
    for holder in [self] if alone else _holders(root):
        if isinstance(holder, UntypedStorage):
            holder._bytes = shm.moved(mapping, low, holder._bytes)
        else:
            holder._data = shm.moved(mapping, low, holder._data)
    return self


class _Holder:
    __slots__ = ("_data",)
    _data: Any


def _lone_count() -> int:
    """What sys.getrefcount says, read as share_memory_ reads it, of an array that one object's
    slot holds (interpreters differ in the references their frames count)."""
    holder = _Holder()
    holder._data = np.empty(1)
    a = holder._data
    return sys.getrefcount(a)


_LONE_COUNT = _lone_count()


def _holders(root: Any) -> list:
    """The live tensors and storages whose arrays are views of root (one pass over the objects
    the collector tracks: share_memory_ is a setup call)."""
    out = []
    for o in gc.get_objects():
        cls = type(o)  # not isinstance: it would ask lazy module proxies for their __class__
        if issubclass(cls, Tensor):
            arr = getattr(o, "_data", None)
        elif issubclass(cls, UntypedStorage):
            arr = getattr(o, "_bytes", None)
        else:
            continue
        if arr is not None and shm.root_array(arr) is root:
            out.append(o)
    return out


for _f in (get_device, is_pinned, pin_memory, is_shared, share_memory_):
    register_method(_f.__name__, _f)
