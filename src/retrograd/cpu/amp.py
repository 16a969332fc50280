"""retrograd.cpu.amp: torch.cpu.amp's deprecated names over retrograd.amp (autocast on the
CPU, which retrograd runs: bfloat16 by default)."""

from __future__ import annotations

from retrograd import _dtype as D
from retrograd import amp as _amp
from retrograd.amp.autocast_mode import deprecated_device_alias

__all__ = ["GradScaler", "autocast"]


class autocast(_amp.autocast):
    """torch.cpu.amp.autocast: autocast('cpu', ...)."""

    def __init__(self, enabled: bool = True, dtype: D.dtype = D.bfloat16,
                 cache_enabled: bool = True) -> None:
        deprecated_device_alias("cpu", "autocast")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """torch.cpu.amp.GradScaler: GradScaler('cpu', ...)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        deprecated_device_alias("cpu", "GradScaler")
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
