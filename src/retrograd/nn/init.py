"""retrograd.nn.init: in-place parameter initializers, with torch's rules for gains and fans.

Every initializer fills its tensor under no_grad, draws from retrograd's RNG (optionally a given
Generator) and returns the tensor.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import retrograd
from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor
from retrograd.autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
    "orthogonal_",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (torch's table)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Fill with N(mean, std^2) truncated to [a, b], by rejection sampling as torch 2.13:
    normal draws redrawn where out of range when [a, b] holds > 30% of the mass, else uniform
    proposals on [a, b] accepted with the normal density relative to its peak."""
    if mean < a - 2 * std or mean > b + 2 * std:
        _ws.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                 "distribution of values may be incorrect.", stacklevel=2)
    mass = _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std)
    with no_grad():
        if mass > 0.3:
            _redraw_out_of_range(tensor, mean, std, a, b, generator)
        else:
            _accept_uniform_proposals(tensor, mean, std, a, b, generator)
    return tensor


def _redraw_out_of_range(tensor: Tensor, mean: float, std: float, a: float, b: float,
                         generator: Any) -> None:
    tensor.normal_(mean, std, generator=generator)
    while True:
        bad = (tensor < a) | (tensor > b)
        if not bool(bad.any()):
            return
        fresh = retrograd.empty_like(tensor).normal_(mean, std, generator=generator)
        tensor.copy_(retrograd.where(bad, fresh, tensor))


def _accept_uniform_proposals(tensor: Tensor, mean: float, std: float, a: float, b: float,
                              generator: Any) -> None:
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def rejected(x: Tensor) -> Tensor:
        log_density = ((x - mean) / std).pow(2).mul(-0.5).sub(log_peak)
        return retrograd.empty_like(x).uniform_(generator=generator).log_().gt(log_density)

    tensor.uniform_(a, b, generator=generator)
    pending = rejected(tensor)
    while bool(pending.any()):
        proposal = retrograd.empty_like(tensor).uniform_(a, b, generator=generator)
        tensor.copy_(retrograd.where(pending, proposal, tensor))
        pending = pending & rejected(proposal)


def _normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def constant_(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    with no_grad():
        return tensor.zero_()


def _copy_array(tensor: Tensor, arr: np.ndarray) -> Tensor:
    from retrograd._ops.creation import tensor as make

    with no_grad():
        tensor.copy_(make(arr, dtype=tensor.dtype))
    return tensor


def eye_(tensor: Tensor) -> Tensor:
    """The 2-D identity (ones on the main diagonal of a rectangular matrix)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _copy_array(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Conv weights that pass each input channel (per group) through unchanged."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    arr = np.zeros(tuple(sizes))
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            arr[(g * out_per_group + d, d) + centre] = 1
    return _copy_array(tensor, arr)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def _zero_element(tensor: Tensor) -> bool:
    if 0 in tensor.shape:
        _ws.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.)."""
    if _zero_element(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He et al.)."""
    if _zero_element(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix (trailing dims flattened), from the QR of a Gaussian one."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        sample = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    flat = np.asarray(sample._data, dtype=np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # makes the factorization unique (uniform over orthogonals)
    if rows < cols:
        q = q.T
    return _copy_array(tensor, (gain * q).reshape(tuple(tensor.shape)))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """N(0, std^2) entries with a `sparsity` fraction of each column set to zero."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            row_indices = retrograd.randperm(rows, generator=generator)
            tensor[row_indices[:num_zeros], col_idx] = 0
    return tensor


def _deprecated_alias(new: Any) -> Any:
    """The pre-0.4 name without the trailing underscore: warns, then calls the in-place form."""
    old = new.__name__[:-1]

    def alias(*args: Any, **kwargs: Any) -> Any:
        _ws.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                 FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated alias of {new.__name__}."
    return alias


uniform = _deprecated_alias(uniform_)
normal = _deprecated_alias(normal_)
constant = _deprecated_alias(constant_)
eye = _deprecated_alias(eye_)
dirac = _deprecated_alias(dirac_)
xavier_uniform = _deprecated_alias(xavier_uniform_)
xavier_normal = _deprecated_alias(xavier_normal_)
kaiming_uniform = _deprecated_alias(kaiming_uniform_)
kaiming_normal = _deprecated_alias(kaiming_normal_)
orthogonal = _deprecated_alias(orthogonal_)
sparse = _deprecated_alias(sparse_)
