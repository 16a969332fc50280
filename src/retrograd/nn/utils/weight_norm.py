"""The hook-based weight normalization (torch.nn.utils.weight_norm, deprecated in torch for
nn.utils.parametrizations.weight_norm): parameters <name>_g and <name>_v, and a forward
pre-hook that recomputes the plain attribute <name> before every call."""

from __future__ import annotations

from typing import Any, TypeVar

import retrograd
from retrograd import _warning_site as _ws
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]

T_module = TypeVar("T_module", bound=Module)


def _uninitialized(module: Module) -> bool:
    check = getattr(module, "has_uninitialized_params", None)
    return bool(callable(check) and check())


class WeightNorm:
    """The forward pre-hook: module.<name> = _weight_norm(<name>_v, <name>_g, dim)."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return retrograd._weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        _ws.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                 "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                 stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if _uninitialized(module):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(retrograd.norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Replace `module.<name>` by <name>_g * <name>_v / ||<name>_v||, recomputed each call."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Fold the weight norm of `name` back into one parameter."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
