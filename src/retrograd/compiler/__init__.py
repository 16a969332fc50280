"""retrograd.compiler: the compiler's public knobs (torch.compiler's place).

config    module of settings (saved_tensors_hooks_filtering_mode, recompile_limit, ...)
counters  {"compiles", "cache_hit", "cache_miss", "cache_bypass"}: int counts
reset()   empty the in-memory cache and zero the counters
"""

from retrograd._compiler import config, counters, reset

__all__ = ["config", "counters", "reset"]
