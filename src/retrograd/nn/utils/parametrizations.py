"""Parametrizations built on nn.utils.parametrize: weight_norm, spectral_norm, orthogonal."""

from __future__ import annotations

from typing import Any

import retrograd
import retrograd.nn.functional as F
from retrograd._tensor import Tensor
from retrograd.nn.modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from retrograd.nn.modules.module import Module
from retrograd.nn.utils import parametrize
from retrograd.nn.utils._orthogonal import orthogonal

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    """weight = g * v / ||v||, with g and v stored as original0 and original1."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return retrograd._weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return retrograd.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split `module.<name>` into a magnitude (original0) and a direction (original1)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_old_keys(state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                      missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        # state_dicts saved with the hook-based weight_norm name the pieces <name>_g, <name>_v
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(load_old_keys)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma the largest singular value estimated by power iteration on the
    buffers _u and _v (updated in training mode on every evaluation)."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:  # a vector is normalized exactly, without estimates
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.size()
            u = mat.new_empty(h).normal_(0, 1)
            v = mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if weight.ndim <= 1:
            raise AssertionError(
                f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # in place, so that the buffers other references hold see the update
        with retrograd.no_grad():
            for _ in range(n_power_iterations):
                F.normalize(retrograd.mv(weight_mat, self._v), dim=0, eps=self.eps,
                            out=self._u)
                F.normalize(retrograd.mv(weight_mat.H, self._u), dim=0, eps=self.eps,
                            out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        # clones: a later forward's in-place update must not touch what this graph saved
        u = self._u.clone(memory_format=retrograd.contiguous_format)
        v = self._v.clone(memory_format=retrograd.contiguous_format)
        sigma = retrograd.vdot(u, retrograd.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _weight_of(module: Module, name: str) -> Any:
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    return weight


def _default_dim(module: Module, dim: int | None) -> int:
    if dim is not None:
        return dim
    # a transposed convolution keeps its output channels in dim 1
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide `module.<name>` by its spectral norm (estimated by power iteration)."""
    weight = _weight_of(module, name)
    piece = _SpectralNorm(weight, n_power_iterations, _default_dim(module, dim), eps)
    parametrize.register_parametrization(module, name, piece)
    return module
