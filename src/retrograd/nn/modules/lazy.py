"""LazyModuleMixin: modules whose parameter shapes are read from their first input.

A lazy module holds UninitializedParameters (and UninitializedBuffers) until its first call.
A forward pre-hook then calls `initialize_parameters(*args, **kwargs)`, which materializes
them with the shapes the input implies and initializes them; the hook removes itself and the
module's class becomes `cls_to_become` (LazyLinear becomes Linear), as in torch. The same
parameter objects carry on, so an optimizer built before the first call holds the real ones.

state_dict keeps the uninitialized tensors as they are; loading an initialized state_dict into
an uninitialized module first materializes the module's tensors with the loaded shapes (a load
pre-hook), after which the first call initializes nothing and only swaps the class.
"""

from __future__ import annotations

import itertools
from typing import Any

from retrograd.autograd.grad_mode import no_grad
from retrograd.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixed in before a Module class: shape inference on the first call (see the module doc).

    Subclasses implement `initialize_parameters` and set `cls_to_become`."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        me: Any = self
        me._load_hook = me._register_load_state_dict_pre_hook(self._lazy_load_hook)
        me._initialize_hook = me.register_forward_pre_hook(self._infer_parameters,
                                                           with_kwargs=True)

    def _save_to_state_dict(self: Any, destination: dict, prefix: str, keep_vars: bool) -> None:
        # an uninitialized tensor is saved as itself (detach would be a use of it)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) \
                    else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars or is_lazy(buf) else buf.detach()

    def _lazy_load_hook(self: Any, state_dict: dict, prefix: str, local_metadata: dict,
                        strict: bool, missing_keys: list, unexpected_keys: list,
                        error_msgs: list) -> None:
        """Before loading: an uninitialized tensor whose entry in state_dict is initialized
        takes that entry's shape, so that the load copies into it."""
        for name, tensor in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if tensor is None or key not in state_dict:
                continue
            value = state_dict[key]
            if is_lazy(tensor) and not is_lazy(value):
                with no_grad():
                    tensor.materialize(value.shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize and initialize the parameters from the first call's arguments."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self: Any) -> bool:
        """Whether any parameter or buffer of this module (not its children) is uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self: Any, module: Any, args: tuple, kwargs: dict | None = None) -> None:
        """The forward pre-hook: initialize, then stop being lazy."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize the "
                           "modules")
