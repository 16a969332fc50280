"""retrograd.export: a module's forward traced into one graph of retrograd ops, with its
parameters and buffers lifted to inputs (torch.export's names; NOTE [Exported programs] in
retrograd.export._trace).

>>> import retrograd
>>> ep = retrograd.export.export(retrograd.nn.Linear(3, 2), (retrograd.ones(4, 3),))
>>> print(ep.graph_signature.user_inputs, ep.graph_signature.parameters)
('input',) ('weight', 'bias')
>>> ep.module()(retrograd.ones(4, 3)).shape
retrograd.Size([4, 2])
"""

from __future__ import annotations

from typing import Any

from retrograd._dynamo.exc import UserError
from retrograd.export import graph_signature
from retrograd.export._serialize import load, save
from retrograd.export._trace import check_examples, mark_dynamic, settle_dynamic, trace, \
    user_leaves
from retrograd.export.dynamic_shapes import Dim, dims
from retrograd.export.exported_program import ExportedProgram, InputGuards
from retrograd.export.graph_signature import ExportGraphSignature
from retrograd.nn.modules.module import Module

__all__ = ["Dim", "ExportGraphSignature", "ExportedProgram", "dims", "export", "graph_signature",
           "load", "save"]

_DRAFT_HINT = ("\n\nThe error above occurred when calling torch.export.export. If you would like "
               "to view some more information about this error, and get a list of all other "
               "errors that may occur in your export call, you can replace your `export()` "
               "call with `draft_export()`.")


def export(mod: Module, args: tuple, kwargs: dict | None = None, *,
           dynamic_shapes: Any = None, strict: bool = False,
           preserve_module_call_signature: tuple = (),
           prefer_deferred_runtime_asserts_over_guards: bool = False) -> ExportedProgram:
    """Trace `mod(*args, **kwargs)` into an ExportedProgram. `dynamic_shapes` marks dimensions
    that calls may vary (NOTE [Exported dynamic dimensions]). `strict` is accepted: retrograd
    traces one way only, as torch's default (non-strict) mode does."""
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, got "
                        f"{type(args)}{_DRAFT_HINT}")
    kwargs = dict(kwargs or {})
    leaves = user_leaves(mod, args, kwargs)
    mark_dynamic(leaves, mod, args, kwargs, dynamic_shapes)
    check_examples(leaves)
    gm, signature, constants, in_spec, out_spec = trace(mod, args, kwargs, leaves)
    settle_dynamic(mod, args, kwargs, leaves, gm.code)
    # the module's own tensors, as torch's: persistent state, and (with the tensors forward
    # made) non-persistent buffers as constants
    state: dict = dict(mod.named_parameters())
    transient = set(signature.non_persistent_buffers)
    for name, b in mod.named_buffers():
        (constants if name in transient else state)[name] = b
    return ExportedProgram(gm, signature, state, constants,
                           InputGuards.of_leaves(in_spec, leaves), out_spec, (args, kwargs))
