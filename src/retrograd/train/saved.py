"""How activations are saved for backward (--saved-tensors), and how many bytes that keeps.

keep        as they are
float16     cast to float16 when saved, back to the original dtype for backward
float8      float8_e4m3fn with a per-tensor scale (amax / 448), back for backward
checkpoint  only block inputs kept; the blocks are recomputed in backward
cpu         save_on_cpu (on a CPU-only library: no copy, as PyTorch does for CPU tensors)

Every strategy runs through the graph API's saved-tensor hooks; a meter wraps them and counts
the bytes of what is actually stored, leaving out parameters (they are alive anyway).
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

import numpy as np

CHOICES = ("keep", "float16", "float8", "checkpoint", "cpu")
F8_MAX = 448.0  # largest finite float8_e4m3fn


class SavedMeter:
    """Counts bytes stored by pack hooks during one forward. A tensor saved by two nodes (a
    layer's output is also the next layer's input) is counted once."""

    def __init__(self) -> None:
        self.bytes = 0
        self._seen: dict = {}

    def reset(self) -> None:
        self.bytes = 0
        self._seen.clear()

    def add(self, stored: Any, source: Any = None) -> None:
        """Count `stored` (what a pack hook keeps for `source`, default: itself)."""
        if stored is None:
            return
        origin = source if source is not None else stored
        key = origin.data_ptr()
        owner = _memory_owner(origin)
        ref = self._seen.get(key)
        # the same address counts once while the memory behind it is alive (addresses of
        # freed tensors are reused)
        if ref is not None and (owner is None or ref() is owner):
            return
        self._seen[key] = weakref.ref(owner) if owner is not None else _ALIVE
        self.bytes += int(stored.numel()) * int(stored.element_size())


def _ALIVE():  # a stand-in weakref for libraries whose memory we cannot reference
    return None


def _memory_owner(t: Any):
    data = getattr(t, "_data", None)  # retrograd: the array that owns the memory
    if data is None:
        return None
    return data if data.base is None else data.base


def _is_parameter(t: Any) -> bool:
    return t.is_leaf and t.requires_grad


def _hooks_for(lib: Any, choice: str, meter: SavedMeter):
    """(pack, unpack) for a strategy, counting stored bytes."""
    if choice in ("keep", "checkpoint"):
        def pack(t):
            if not _is_parameter(t):
                meter.add(t)
            return t

        return pack, lambda t: t
    if choice == "cpu":
        def pack_cpu(t):
            if not _is_parameter(t):
                meter.add(t)
            return (t.device, t.cpu())

        return pack_cpu, lambda p: p[1].to(p[0])
    if choice == "float16":
        def pack16(t):
            if _is_parameter(t) or not t.is_floating_point():
                return (None, t)
            small = t.to(lib.float16)
            meter.add(small, t)
            return (t.dtype, small)

        return pack16, lambda p: p[1] if p[0] is None else p[1].to(p[0])
    if choice == "float8":
        def pack8(t):
            if _is_parameter(t) or not t.is_floating_point():
                return (None, t, None)
            amax = float(t.detach().abs().max()) if t.numel() else 0.0
            scale = amax / F8_MAX if amax > 0 else 1.0
            q = (t / scale).to(lib.float8_e4m3fn)
            meter.add(q, t)
            return (t.dtype, q, scale)

        return pack8, lambda p: p[1] if p[0] is None else p[1].to(p[0]) * p[2]
    raise ValueError(f"unknown --saved-tensors choice {choice!r}; pick one of {CHOICES}")


@contextlib.contextmanager
def saving(lib: Any, choice: str, meter: SavedMeter):
    pack, unpack = _hooks_for(lib, choice, meter)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        yield


def checkpoint_input_bytes(x: Any) -> int:
    """What checkpointing keeps per block: its input (counted by the caller per block)."""
    return int(np.prod(x.shape)) * x.element_size()
