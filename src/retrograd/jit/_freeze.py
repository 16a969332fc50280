"""freeze and optimize_for_inference.

torch inlines a scripted module's parameters and attributes as constants of its graph. With no
graph here, a frozen module is the module itself, checked as torch checks it (a module, in eval
mode, preserved names that exist): it keeps its parameters (its outputs require grad, where a
frozen torch module's do not) and runs its forward as written.
"""

from __future__ import annotations

from typing import Any

from retrograd.jit._deprecation import warn_compile_path
from retrograd.nn.modules.module import Module

__all__ = ["freeze", "optimize_for_inference", "run_frozen_optimizations"]

_NOT_SCRIPTED = ("{} expects a ScriptModule as input. Please use torch.jit.script or "
                 "torch.jit.trace to script your 'nn.Module'.")


def freeze(mod: Any, preserved_attrs: list[str] | None = None,
           optimize_numerics: bool = True) -> Any:
    warn_compile_path("freeze")
    # retrograd's script and trace return the nn.Module itself, so any module is accepted
    if not isinstance(mod, Module):
        raise RuntimeError(_NOT_SCRIPTED.format("Freezing"))
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    for name in preserved_attrs or []:
        if not hasattr(mod, name):
            raise RuntimeError(f"Unknown name: {name}")
    return mod


def run_frozen_optimizations(mod: Any, optimize_numerics: bool = True,
                             preserved_methods: list[str] | None = None) -> None:
    """Graph rewrites of a frozen module; nothing to rewrite when running eagerly."""


def optimize_for_inference(mod: Any, other_methods: list[str] | None = None) -> Any:
    warn_compile_path("optimize_for_inference")
    if not isinstance(mod, Module):
        raise RuntimeError(_NOT_SCRIPTED.format("optimize_for_inference"))
    # torch puts the module in eval mode itself before freezing it
    return freeze(mod.eval(), preserved_attrs=other_methods or [])
