"""retrograd.compiler: the compiler's public knobs and calls (torch.compiler's place).

config                 module of settings (saved_tensors_hooks_filtering_mode,
                       recompile_limit, ...)
counters               {"compiles", "cache_hit", "cache_miss", "cache_bypass"}: int counts
reset()                empty the in-memory cache and zero the counters
compile(...)           retrograd.compile
is_compiling()         True while retrograd.compile captures the calling code
disable(fn)            fn never runs inside a compiled graph (its callers run eagerly)
set_stance(stance)     force_eager, eager_on_recompile, fail_on_recompile,
                       eager_then_compile (a call, context manager or decorator)
list_backends(), get_default_backend(), set_default_backend(backend)
allow_in_graph, assume_constant_result, nested_compile_region: markers that need no action
cudagraph_mark_step_begin(): nothing to mark (no CUDA graphs)
"""

from typing import Any

from retrograd._compiler import config, counters, reset
from retrograd._compiler.backends import get_default_backend, list_backends, set_default_backend
from retrograd._compiler.stance import set_stance
from retrograd._compiler.tracing import (
    allow_in_graph,
    assume_constant_result,
    cudagraph_mark_step_begin,
    disable,
    is_compiling,
    is_exporting,
    nested_compile_region,
)

is_dynamo_compiling = is_compiling


def compile(*args: Any, **kwargs: Any) -> Any:  # noqa: A001 - torch.compiler.compile
    """torch.compiler.compile: retrograd.compile."""
    from retrograd._compile import compile as compile_

    return compile_(*args, **kwargs)


__all__ = ["allow_in_graph", "assume_constant_result", "compile", "config", "counters",
           "cudagraph_mark_step_begin", "disable", "get_default_backend", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "list_backends", "nested_compile_region",
           "reset", "set_default_backend", "set_stance"]
