"""Pruning: a parameter <name> becomes <name>_orig (the parameter) times <name>_mask (a
buffer), recomputed by a forward pre-hook before each call. Pruning the same tensor again
combines the methods in a PruningContainer, each new mask computed on what is still unpruned.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.nn.modules.module import Module

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
           "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
           "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
           "random_structured", "random_unstructured", "remove"]


class BasePruningMethod(ABC):
    """A pruning method: compute_mask says what to keep; apply installs it on a module."""

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for `t`, given the mask already in place."""

    def apply_mask(self, module: Module) -> Tensor:
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def _merged_with_existing(cls, module: Module, name: str, *args: Any,
                              **kwargs: Any) -> BasePruningMethod:
        """The new method, or a container of the method already on `name` and the new one."""
        found = [(k, h) for k, h in module._forward_pre_hooks.items()
                 if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        if len(found) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                                 f"of module {module}. Use a PruningContainer.")
        for key, _ in found:
            del module._forward_pre_hooks[key]
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        if not found:
            return method
        old = found[0][1]
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            return old
        container = PruningContainer(old)
        container.add_pruning_method(method)
        return container

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any,
              importance_scores: Tensor | None = None, **kwargs: Any) -> BasePruningMethod:
        """Prune `module.<name>` in place with this method (composing with earlier ones)."""
        method = cls._merged_with_existing(module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = retrograd.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=retrograd.contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # leave the module as it was
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """`t` with this method's mask applied (no module involved)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError("importance_scores should have the same shape as tensor t, "
                                     f"got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else retrograd.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: <name> is the masked parameter again."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _structured_slice(method: Any, t: Tensor, mask: Tensor) -> tuple:
    """The channels along method.dim that still have an unpruned entry."""
    if not hasattr(method, "dim"):
        raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the '
                             "attribute `dim` defined.")
    n_dims = t.dim()
    dim = method.dim + n_dims if method.dim < 0 else method.dim
    if dim < 0:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
    keep = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
    slc: list = [slice(None)] * n_dims
    slc[dim] = keep
    return tuple(slc)


class PruningContainer(BasePruningMethod):
    """Successive pruning methods on one tensor; the last one added prunes what remains."""

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: Any) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: Any) -> Any:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc: Any = default_mask == 1
        elif kind == "structured":
            slc = _structured_slice(method, t, default_mask)
        elif kind == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class _AmountMethod(BasePruningMethod):
    amount: float

    def _count(self, size: int) -> int:
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        return k


class RandomUnstructured(_AmountMethod):
    """Prunes `amount` entries chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = self._count(t.nelement())
        mask = default_mask.clone(memory_format=retrograd.contiguous_format)
        if k != 0:
            chosen = retrograd.topk(retrograd.rand_like(t).view(-1), k=k).indices
            mask.view(-1)[chosen] = 0
        return mask

    @classmethod
    def apply(cls, module: Module, name: str,  # type: ignore[override]
              amount: float) -> BasePruningMethod:
        return super().apply(module, name, amount=amount)


class L1Unstructured(_AmountMethod):
    """Prunes the `amount` entries of smallest magnitude."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = self._count(t.nelement())
        mask = default_mask.clone(memory_format=retrograd.contiguous_format)
        if k != 0:
            smallest = retrograd.topk(retrograd.abs(t).view(-1), k=k, largest=False).indices
            mask.view(-1)[smallest] = 0
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t: Tensor, dim: int, keep: Any) -> Tensor:
    """Ones on the channels `keep` (indices or a bool mask) along dim, zeros elsewhere."""
    mask = retrograd.zeros_like(t)
    slc: list = [slice(None)] * len(t.shape)
    slc[dim] = keep
    mask[tuple(slc)] = 1
    return mask


class RandomStructured(_AmountMethod):
    """Prunes `amount` channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = self._count(size)
        if k == 0:
            return default_mask
        prob = retrograd.rand(size)
        threshold = retrograd.kthvalue(prob, k=k).values
        mask = _channel_mask(t, self.dim, prob > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_AmountMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = self._count(size)
        norm = _compute_norm(t, self.n, self.dim)
        kept = retrograd.topk(norm, k=size - k, largest=True).indices
        if k == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, kept)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: float, n: Any,  # type: ignore[override]
              dim: int, importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str,  # type: ignore[override]
              mask: Tensor) -> BasePruningMethod:
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Reparametrize `name` with an all-ones mask."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: float) -> Module:
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: float,
                    importance_scores: Tensor | None = None) -> Module:
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: float, dim: int) -> Module:
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Any, pruning_method: Any,
                        importance_scores: dict | None = None, **kwargs: Any) -> None:
    """Prune the (module, name) pairs together, as if one flat tensor."""
    from retrograd.nn.utils.convert_parameters import parameters_to_vector

    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for (m, n) in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask",
                                                 retrograd.ones_like(getattr(m, n)))
                                         for (m, n) in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final[start:start + count].view_as(param))
        start += count


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of `name` permanent and drop its hook, mask and _orig."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module: Module) -> bool:
    """Whether any submodule of `module` carries a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())


def _validate_pruning_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or (not integral and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and int(amount) > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount: Any, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    """The L`n` norm of each slice of `t` along `dim`."""
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return retrograd.norm(t, p=n, dim=dims)
