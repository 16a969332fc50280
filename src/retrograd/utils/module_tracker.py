"""retrograd.utils.module_tracker: which nn.Modules are running, forward or backward.

A module enters `parents` (by its fully qualified name: the root module's class name, then
attribute names, `Net.layer1.0`) when its forward starts and leaves when it ends; in backward it
re-enters when gradients reach its outputs and leaves when they reach its inputs (multi-grad
hooks on the tensors that require grad). "Global" is always there. Global module hooks do the
tracking, so any module works, as with torch's ModuleTracker.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from retrograd import _C
from retrograd.autograd import Variable
from retrograd.autograd.graph import register_multi_grad_hook
from retrograd.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)
from retrograd.utils._pytree import tree_flatten

__all__ = ["ModuleTracker"]

logger = logging.getLogger(__name__)


def _grad_tensors(tree: Any) -> list:
    from retrograd._tensor import Tensor

    leaves, _ = tree_flatten(tree)
    return [a for a in leaves if isinstance(a, Tensor) and a.requires_grad]


class ModuleTracker:
    """Context manager: `parents` is the set of the fully qualified names of the modules now
    running (always with "Global"); `is_bw` whether a backward pass is running."""

    parents: set[str]

    def __init__(self) -> None:
        self.parents = {"Global"}
        self._known_modules: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._seen_modules: weakref.WeakSet = weakref.WeakSet()
        self._has_callback = False
        self._hooks: list = []

    @property
    def is_bw(self) -> bool:
        return _C._current_graph_task_id() != -1

    def _maybe_set_engine_callback(self) -> None:
        """At the end of a backward pass, start over from "Global" (a module whose inputs need
        no gradient is never left by backward hooks)."""
        if self._has_callback:
            return

        def callback() -> None:
            self.parents = {"Global"}
            self._has_callback = False

        Variable._execution_engine.queue_callback(callback)
        self._has_callback = True

    def _get_mod_name(self, mod: Any) -> str:
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for child_name, child in mod.named_children():
                self._known_modules[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
            self._seen_modules.add(mod)
        return name

    def _get_append_fn(self, name: str, is_bw: bool):
        def fn(*args: Any) -> None:
            if is_bw:
                self._maybe_set_engine_callback()
            if name in self.parents:
                logger.info("The module hierarchy tracking seems to be broken as this Module was "
                            "already entered. %s during %s", name,
                            "backward" if is_bw else "forward")
            self.parents.add(name)

        return fn

    def _get_pop_fn(self, name: str, is_bw: bool):
        def fn(*args: Any) -> None:
            if name in self.parents:
                self.parents.remove(name)
            else:
                logger.info("The Module hierarchy tracking is confused as we're exiting a Module "
                            "that was never entered. %s during %s", name,
                            "backward" if is_bw else "forward")

        return fn

    def _fw_pre_hook(self, mod: Any, args: Any) -> None:
        name = self._get_mod_name(mod)
        self._get_append_fn(name, False)()
        tensors = _grad_tensors(args)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_pop_fn(name, True)))

    def _fw_post_hook(self, mod: Any, args: Any, output: Any) -> None:
        name = self._get_mod_name(mod)
        self._get_pop_fn(name, False)()
        tensors = _grad_tensors(output)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors,
                                                        self._get_append_fn(name, True)))

    def __enter__(self) -> ModuleTracker:
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args: Any) -> None:
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
