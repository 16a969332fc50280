"""The hook-based spectral normalization (torch.nn.utils.spectral_norm): parameter
<name>_orig, buffers <name>_u and <name>_v, and a forward pre-hook that divides by the
power-iteration estimate of the largest singular value."""

from __future__ import annotations

from typing import Any, TypeVar

import retrograd
import retrograd.nn.functional as F
from retrograd._tensor import Tensor
from retrograd.nn.modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter
from retrograd.nn.utils.weight_norm import _uninitialized

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "remove_spectral_norm", "spectral_norm"]

T_module = TypeVar("T_module", bound=Module)


class SpectralNorm:
    """The forward pre-hook: module.<name> = <name>_orig / sigma."""

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        mat = weight
        if self.dim != 0:
            mat = mat.permute(self.dim, *[d for d in range(mat.dim()) if d != self.dim])
        return mat.reshape(mat.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # u and v are updated in place (they are the module's buffers), then cloned so the
            # graph of this call keeps its own copies
            with retrograd.no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(retrograd.mv(mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(retrograd.mv(mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone(memory_format=retrograd.contiguous_format)
                v = v.clone(memory_format=retrograd.contiguous_format)
        sigma = retrograd.dot(u, retrograd.mv(mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with retrograd.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor, target_sigma: Any) -> Tensor:
        # the v for which u^T W v = target_sigma, with W's pseudo-inverse
        v = retrograd.linalg.multi_dot([weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(),
                                        u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / retrograd.dot(u, retrograd.mv(weight_mat, v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if _uninitialized(module):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with retrograd.no_grad():
            mat = fn.reshape_weight_to_matrix(weight)
            h, w = mat.size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first call; the hook then overwrites it
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Loads state_dicts of version 0 (which stored <name> but no <name>_v)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                 missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and all(key + s in state_dict for s in ("_orig", "_u", "_v")) \
                and key not in state_dict:
            return
        missing = False
        for suffix in ("_orig", "", "_u"):
            if key + suffix not in state_dict:
                missing = True
                if strict:
                    missing_keys.append(key + suffix)
        if missing:
            return
        with retrograd.no_grad():
            weight_orig = state_dict[key + "_orig"]
            weight = state_dict.pop(key)
            sigma = (weight_orig / weight).mean()
            mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[key + "_u"]
            state_dict[key + "_v"] = fn._solve_v_and_rescale(mat, u, sigma)


class SpectralNormStateDictHook:
    """Records the spectral_norm version in the state_dict's metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict: dict, prefix: str,
                 local_metadata: dict) -> None:
        meta = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in meta:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        meta[key] = self.fn._version


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> T_module:
    """Divide `module.<name>` by its spectral norm before every call (forward pre-hook)."""
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Fold the spectral norm of `name` back into one parameter."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for key, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[key]
            break
    # the load pre-hook sits inside a wrapper, so (as in torch) this finds nothing to remove
    for key, hook in module._load_state_dict_pre_hooks.items():
        if isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn.name == name:
            del module._load_state_dict_pre_hooks[key]
            break
    return module
