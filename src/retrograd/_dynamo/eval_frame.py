"""torch._dynamo.eval_frame's names that programs test for.

OptimizedModule is torch's wrapper around a compiled module (`model._orig_mod` unwraps it).
retrograd.compile hands back the module itself, so nothing is an OptimizedModule here and
`isinstance(model, OptimizedModule)` checks take their "not compiled" branch, which leaves the
module as it is: what such code wants."""

from __future__ import annotations

from retrograd.nn.modules.module import Module


class OptimizedModule(Module):
    """Never made by retrograd (see the module docstring)."""

    def __init__(self, mod: Module, dynamo_ctx: object = None) -> None:
        raise RuntimeError("retrograd.compile returns the module itself; there is no "
                           "OptimizedModule wrapper to make")
