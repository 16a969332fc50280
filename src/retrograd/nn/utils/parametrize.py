"""Parametrizations: a module's tensor computed on access from stored originals.

Registering a parametrization moves `module.<name>` into
`module.parametrizations[<name>]` (a ParametrizationList holding `original`, or `original0`,
`original1`, ... when right_inverse returns a sequence) and swaps the module's class for a
subclass named `Parametrized<Class>` carrying a property `<name>` that evaluates the chain.
State_dict keys therefore read `parametrizations.<name>.original`, as in torch.
"""

from __future__ import annotations

import collections.abc
import copy
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.nn.modules.container import ModuleDict, ModuleList
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "transfer_parametrizations_and_params",
           "type_before_parametrizations"]

_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside this block each parametrized tensor is computed once (on first access)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module: Module, name: str, x: Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    # set_ keeps dest's identity, so optimizers holding it keep working
    dest.set_(src)


def _shape_dtype_check(z: Any, shape: Any, dtype: Any) -> None:
    if not isinstance(z, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
    if z.dtype != dtype:
        raise ValueError(
            "Registering a parametrization may not change the dtype of the tensor, unless "
            "`unsafe` flag is enabled.\n"
            f"unparametrized dtype: {dtype}\n"
            f"parametrized dtype: {z.dtype}")
    if z.shape != shape:
        raise ValueError(
            "Registering a parametrization may not change the shape of the tensor, unless "
            "`unsafe` flag is enabled.\n"
            f"unparametrized shape: {shape}\n"
            f"parametrized shape: {z.shape}")


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, with the stored original(s)."""

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor | Parameter,
                 unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with retrograd.no_grad():
            new: Any = original
            for module in reversed(self):  # type: ignore[call-overload]
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if isinstance(new, Tensor) else len(new)
        if isinstance(new, Tensor):
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}")
            if original.device != new.device:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the device.\n"
                    f"original.device: {original.device}\n"
                    f"right_inverse(original).device: {new.device}")
            with retrograd.no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        "(list, tuple...). "
                        f"Got element {i} of the sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            _shape_dtype_check(self(), shape, dtype)

    def right_inverse(self, value: Tensor) -> None:
        """Store the originals whose parametrized value is `value` (assignment to the tensor)."""
        with retrograd.no_grad():
            out: Any = value
            for module in reversed(self):  # type: ignore[call-overload]
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                out = module.right_inverse(out)
            if self.is_tensor:
                self._set_one(out)
            else:
                self._set_many(out)

    def _set_one(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
        if value.dtype != self.original.dtype:
            raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                             f"while `original` has dtype {self.original.dtype}")
        _maybe_set(self.original, value)

    def _set_many(self, value: Any) -> None:
        if not isinstance(value, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a sequence of tensors. "
                             f"Got {type(value).__name__}.")
        if len(value) != self.ntensors:
            raise ValueError("'right_inverse' must return a sequence of tensors of length "
                             f"{self.ntensors}. Got a sequence of length {len(value)}.")
        for i, tensor in enumerate(value):
            current = getattr(self, f"original{i}")
            if not isinstance(tensor, Tensor):
                raise ValueError("'right_inverse' must return a sequence of tensors or "
                                 f"reference-type opaques. Got element {i} of type "
                                 f"{type(tensor).__name__}.")
            if current.dtype != tensor.dtype:
                raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                 f"{tensor.dtype} while `original{i}` has dtype {current.dtype}")
            _maybe_set(current, tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        # only the integer-named children are parametrizations
        idx = 1
        while hasattr(self, str(idx)):
            x = self[idx](x)
            idx += 1
        return x


def _deepcopy_instance(self: Module, memo: dict) -> Module:
    found = memo.get(id(self))
    if found is not None:
        return found
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(type(self)):  # type: ignore[attr-defined]
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickle(self: Module) -> None:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module: Module) -> None:
    # a fresh subclass per module, so properties added to it touch no other instance
    cls = type(module)
    namespace: dict[str, Any] = {"__getstate__": _refuse_pickle}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy_instance
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self: Module) -> Tensor:
        chain = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return chain()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = chain()
            _cache[key] = tensor
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def _check_against(module: Module, tensor_name: str, parametrization: Module) -> None:
    """Adding to an existing chain: the new piece must keep the tensor's dtype and shape."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    where = f"module.{tensor_name}"
    if x.dtype != y.dtype:
        raise ValueError(
            "Registering a parametrization may not change the dtype of the tensor, unless the "
            f"`unsafe` flag is enabled.\n{where}.dtype: {y.dtype}\n"
            f"parametrization({where}).dtype: {x.dtype}")
    if x.shape != y.shape:
        raise ValueError(
            "Registering a parametrization may not change the shape of the tensor, unless the "
            f"`unsafe` flag is enabled.\n{where}.shape: {y.shape}\n"
            f"parametrization({where}).shape: {x.shape}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError("parametrization.right_inverse must return a tensor. "
                         f"Got: {type(z).__name__}")
    if z.dtype != y.dtype:
        raise ValueError(
            "The tensor returned by parametrization.right_inverse must have the same dtype as "
            f"{where}, unless the `unsafe` flag is enabled.\n{where}.dtype: {y.dtype}\n"
            f"returned dtype: {z.dtype}")
    if z.shape != y.shape:
        raise ValueError(
            "The tensor returned by parametrization.right_inverse must have the same shape as "
            f"{where}, unless the `unsafe` flag is enabled.\n{where}.shape: {y.shape}\n"
            f"returned shape: {z.shape}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make `module.<tensor_name>` the output of `parametrization` on a stored original."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_against(module, tensor_name, parametrization)
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        chain = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = chain
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has any parametrization (or one on `tensor_name`)."""
    chains = getattr(module, "parametrizations", None)
    if chains is None or not isinstance(chains, ModuleDict):
        return False
    if tensor_name is None:
        return len(chains) > 0
    return tensor_name in chains


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo register_parametrization; keep the current value or the stored original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with retrograd.no_grad():
                value = getattr(module, tensor_name)
                _maybe_set(original, value)
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before register_parametrization swapped it."""
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register on `to_module` the parametrizations (and their originals) of `from_module`."""
    if not is_parametrized(from_module):
        return to_module
    chains = from_module.parametrizations
    names = list(chains) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for piece in chains[name]:
            register_parametrization(to_module, name, piece)
        source, target = chains[name], to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
            continue
        i = 0
        while hasattr(source, f"original{i}"):
            setattr(target, f"original{i}", getattr(source, f"original{i}"))
            i += 1
    return to_module
