"""retrograd.cuda: answers for a library with no CUDA devices.

Queries say there is no GPU; seeding and synchronising are accepted and do nothing (there is
nothing to seed or wait for), so CPU programs that call them unconditionally run. Calls that
need a device raise torch's error for a build without CUDA.
"""

from __future__ import annotations

from typing import Any

NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _no_cuda(*args: Any, **kwargs: Any):
    raise AssertionError(NOT_COMPILED)


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def manual_seed(seed: int) -> None:
    int(seed)  # validated as torch does, then there is no CUDA generator to seed


def manual_seed_all(seed: int) -> None:
    int(seed)


def seed() -> None:
    pass


def seed_all() -> None:
    pass


def synchronize(device: Any = None) -> None:
    pass


def empty_cache() -> None:
    pass


def memory_allocated(device: Any = None) -> int:
    return 0


def max_memory_allocated(device: Any = None) -> int:
    return 0


def memory_reserved(device: Any = None) -> int:
    return 0


def max_memory_reserved(device: Any = None) -> int:
    return 0


def get_arch_list() -> list:
    return []


init = current_device = get_device_name = get_device_capability = get_device_properties = \
    set_device = initial_seed = get_rng_state = set_rng_state = get_rng_state_all = \
    set_rng_state_all = current_stream = default_stream = reset_peak_memory_stats = _no_cuda

from retrograd.cuda import amp  # noqa: E402  (torch.cuda.amp, over retrograd.amp)
