"""torch._inductor.config: the code generator's knobs, with torch's names and defaults.

retrograd.compile generates NumPy code, with no kernels to fuse, tile, autotune or wrap in CUDA
graphs, so these knobs change nothing here; they are kept so that programs written for torch
(which set `coordinate_descent_tuning`, `triton.unique_kernel_names`, `fx_graph_cache` before
compiling) run unchanged. As torch's, the module and its sections refuse names they do not
have, so a misspelt knob is an error rather than silently ignored.
"""

from __future__ import annotations

import sys
import types
from typing import Any

coordinate_descent_tuning = False
coordinate_descent_check_all_directions = False
fx_graph_cache = True
fx_graph_remote_cache = None
force_disable_caches = False
autotune_local_cache = True
max_autotune = False
max_autotune_gemm = False
max_autotune_pointwise = False
freezing = False
epilogue_fusion = True
aggressive_fusion = False
group_fusion = False
permute_fusion = False
pattern_matcher = True
reorder_for_locality = True
max_fusion_size = 64
shape_padding = True
comprehensive_padding = True
conv_1x1_as_mm = False
layout_optimization = True
keep_output_stride = True
split_reductions = True
dynamic_scale_rblock = True
unroll_reductions_threshold = 8
realize_opcount_threshold = None
online_softmax = True
implicit_fallbacks = True
benchmark_kernel = False
cpp_wrapper = False
fallback_random = False
emulate_precision_casts = False
force_fuse_int_mm_with_mul = False
use_mixed_mm = True
size_asserts = True
compile_threads = 2
debug = False


class _Section:
    """A section of knobs (`triton`, `cpp`, `trace`): its names are fixed at creation."""

    def __init__(self, path: str, **knobs: Any) -> None:
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_names", frozenset(knobs))
        for name, value in knobs.items():
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:  # only for names the section does not hold
        raise AttributeError(f"{self._path}.{name} does not exist")

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._names:
            raise AttributeError(f"{self._path}.{name} does not exist")
        object.__setattr__(self, name, value)


triton = _Section(f"{__name__}.triton", unique_kernel_names=True, cudagraphs=False,
                  cudagraph_trees=True, max_tiles=None, autotune_pointwise=True)
cpp = _Section(f"{__name__}.cpp", enable_kernel_profile=False, threads=-1, simdlen=None,
               dynamic_threads=False)
trace = _Section(f"{__name__}.trace", enabled=False)

_KNOBS = frozenset(name for name, value in list(globals().items())
                   if not name.startswith("_") and not isinstance(value, types.ModuleType)
                   and name not in ("annotations", "Any"))


class _ConfigModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:  # only for names the module does not hold
        raise AttributeError(f"{self.__name__}.{name} does not exist")

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _KNOBS and not name.startswith("__"):
            raise AttributeError(f"{self.__name__}.{name} does not exist")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _ConfigModule
