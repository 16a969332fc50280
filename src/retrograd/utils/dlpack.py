"""retrograd.utils.dlpack: torch.utils.dlpack's names (exchange of tensors by DLPack, sharing
memory with NumPy, torch and any other library that speaks it)."""

from __future__ import annotations

from retrograd._ops.external_memory import DLDeviceType, from_dlpack, to_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
