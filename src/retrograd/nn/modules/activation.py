"""Activation layers: thin modules over retrograd.nn.functional's activations."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn import init
from retrograd.nn.modules._elsewhere import elsewhere
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["Threshold", "ReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU",
           "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU",
           "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin",
           "Softmax", "Softmax2d", "LogSoftmax"]


def _inplace_suffix(inplace: bool, first: bool = False) -> str:
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class _Inplace(Module):
    """An activation whose only option is `inplace`."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return _inplace_suffix(self.inplace, first=True)


class Threshold(Module):
    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class ReLU(_Inplace):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.relu(input, inplace=self.inplace)


class Hardtanh(Module):
    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            _ws.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                     FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            _ws.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                     FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_suffix(self.inplace, first=True)


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return retrograd.sigmoid(input)


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return retrograd.tanh(input)


class Hardsigmoid(_Inplace):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Hardswish(_Inplace):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class SiLU(_Inplace):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.mish(input, inplace=self.inplace)


class SELU(_Inplace):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.selu(input, self.inplace)


class ELU(Module):
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.celu(input, self.alpha, self.inplace)


class GLU(Module):
    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.softshrink(input, self.lambd)


class LeakyReLU(Module):
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class LogSigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.logsigmoid(input)


class Softplus(Module):
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """LeakyReLU with a learned slope (one, or one per channel)."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(retrograd.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.softsign(input)


class Tanhshrink(Module):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.tanhshrink(input)


class _SoftmaxBase(Module):
    __constants__ = ["dim"]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.softmin(input, self.dim, _stacklevel=5)


class Softmax(_SoftmaxBase):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.log_softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channel dim of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return nn.functional.softmax(input, -3, _stacklevel=5)

# torch's module path for these names, whose classes live in other files
_HOMES = {
    "RReLU": "rrelu", "MultiheadAttention": "transformer"}
__getattr__ = elsewhere(__name__, _HOMES)
__all__ += [name for name in _HOMES if not name.startswith("_")]
