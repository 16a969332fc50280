"""retrograd.cuda.amp: torch.cuda.amp's deprecated names over retrograd.amp. There is no CUDA
here, so, as in torch without CUDA, they warn that CUDA is unavailable when enabled and then
pass through."""

from __future__ import annotations

import functools
from typing import Any

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd import amp as _amp
from retrograd.amp.autocast_mode import deprecated_device_alias

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class autocast(_amp.autocast):
    """torch.cuda.amp.autocast: autocast('cuda', ...)."""

    def __init__(self, enabled: bool = True, dtype: D.dtype = D.float16,
                 cache_enabled: bool = True) -> None:
        deprecated_device_alias("cuda", "autocast")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """torch.cuda.amp.GradScaler: GradScaler('cuda', ...)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        deprecated_device_alias("cuda", "GradScaler")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs: D.dtype | None = None) -> Any:
    """torch.cuda.amp.custom_fwd: retrograd.amp.custom_fwd(device_type='cuda')."""
    _ws.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
             "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
             FutureWarning, stacklevel=2)
    return functools.partial(_amp.custom_fwd, device_type="cuda", cast_inputs=cast_inputs) \
        if fwd is None else _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd) -> Any:
    """torch.cuda.amp.custom_bwd: retrograd.amp.custom_bwd(device_type='cuda')."""
    _ws.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
             "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
             FutureWarning, stacklevel=2)
    return _amp.custom_bwd(bwd, device_type="cuda")
