"""retrograd.compiler.config: the compiler's knobs (module attributes, set them directly)."""

from __future__ import annotations

# which saved tensors inlined saved-tensor hooks apply to: "donated" (intermediates only, the
# values the forward could free), "no_static" (all but parameters), "all"
saved_tensors_hooks_filtering_mode = "donated"
# where inlined hooks go: "last_use" (each pack right after its tensor's last forward use, each
# unpack right before its first backward use) or "epilogue" (forward epilogue and backward
# prologue, as torch places them)
saved_tensors_hooks_placement = "last_use"
# compiled variants per function before it runs eagerly (with a warning)
recompile_limit = 8
# run each new compiled graph once on the captured values and compare (falls back on mismatch)
verify = True
# write generated code with out= into dead buffers of the same shape and dtype
reuse_buffers = True
# keep compiled graphs on disk under $RETROGRAD_CACHE_DIR (default: the user's cache dir)
disk_cache = True
