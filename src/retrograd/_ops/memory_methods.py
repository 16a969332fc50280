"""Tensor methods about where memory lives (pinned, shared, which device) for CPU memory."""

from __future__ import annotations

from typing import Any

from retrograd import _shared_memory as shm
from retrograd._ops.registry import register_method
from retrograd._tensor import Tensor, _is_wrapper
from retrograd.storage import share_memory

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
    if not _is_wrapper(self):  # a wrapper's array is only its geometry
        share_memory(self)
    return self


for _f in (get_device, is_pinned, pin_memory, is_shared, share_memory_):
    register_method(_f.__name__, _f)
