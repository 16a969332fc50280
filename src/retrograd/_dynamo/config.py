"""torch._dynamo.config: the knobs programs set before compiling.

`recompile_limit` (and its older name `cache_size_limit`) is retrograd.compiler.config's
recompile_limit, and `automatic_dynamic_shapes=False` keeps the default `dynamic=None` from
making changed sizes symbols. The other knobs are kept for programs that set them and describe
what retrograd does anyway: every compile failure falls back to eager, logged
(`suppress_errors`); reading a tensor into Python runs the function eagerly for those inputs
(`capture_scalar_outputs`, `capture_dynamic_output_shape_ops`); a compiled module's gradients
reach DDP's buckets as eager ones do (`optimize_ddp`). As torch's, the module refuses names it
does not have.
"""

from __future__ import annotations

import sys
import types
from typing import Any

automatic_dynamic_shapes = True
accumulated_recompile_limit = 256
suppress_errors = False
verbose = False
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
optimize_ddp = True

_ALIASES = {"recompile_limit", "cache_size_limit"}  # -> retrograd.compiler.config
_OWN = {"automatic_dynamic_shapes", "accumulated_recompile_limit", "suppress_errors", "verbose",
        "capture_scalar_outputs", "capture_dynamic_output_shape_ops", "optimize_ddp"}


class _ConfigModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:  # only for names the module does not hold
        if name in _ALIASES:
            from retrograd._compiler import config

            return config.recompile_limit
        if name == "accumulated_cache_size_limit":
            return self.accumulated_recompile_limit
        raise AttributeError(f"{self.__name__}.{name} does not exist")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _ALIASES:
            from retrograd._compiler import config

            config.recompile_limit = value
        elif name == "accumulated_cache_size_limit":
            super().__setattr__("accumulated_recompile_limit", value)
        elif name in _OWN or name.startswith("__"):
            super().__setattr__(name, value)
        else:
            raise AttributeError(f"{self.__name__}.{name} does not exist")


sys.modules[__name__].__class__ = _ConfigModule
