"""retrograd.jit: the names of torch.jit, run eagerly.

TorchScript (a compiler and an interpreter for a typed subset of Python) is not part of
retrograd. Programs written for it still run here: `script` and `trace` give back the function
or module they are given (trace runs it once on the example inputs first, so that errors show
where torch shows them), the compiler's markers give back what they mark, `fork` runs its task
at once, and the fuser settings are kept and read back. What needs a compiled program refuses
plainly: `save`/`load` of TorchScript archives and CompilationUnit source.
"""

from retrograd.futures import Future
from retrograd.jit._async import fork, wait
from retrograd.jit._async import fork as _fork, wait as _wait  # torch's older spellings
from retrograd.jit._freeze import freeze, optimize_for_inference, run_frozen_optimizations
from retrograd.jit._fuser import (
    enable_onednn_fusion, fuser, onednn_fusion_enabled, optimized_execution,
    set_fusion_strategy, strict_fusion,
)
from retrograd.jit._isinstance import isinstance
from retrograd.jit._markers import _overload, _overload_method, export, ignore, unused
from retrograd.jit._script import (
    Attribute, CompilationUnit, Error, Final, RecursiveScriptModule, ScriptFunction,
    ScriptModule, ScriptWarning, annotate, interface, is_scripting, script, script_if_tracing,
    script_method,
)
from retrograd.jit._serialization import load, save
from retrograd.jit._trace import (
    TracerWarning, TracingCheckError, is_tracing, trace, trace_module,
)

# torch.jit's own list (export_opnames, which reads a compiled module's op names, is left out)
__all__ = [
    "Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule",
    "annotate", "enable_onednn_fusion", "export", "fork", "freeze", "ignore", "interface",
    "isinstance", "load", "onednn_fusion_enabled", "optimize_for_inference", "save", "script",
    "script_if_tracing", "set_fusion_strategy", "strict_fusion", "trace", "trace_module",
    "unused", "wait",
]
