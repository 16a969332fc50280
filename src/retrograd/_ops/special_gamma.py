"""igamma and igammac: the regularized lower and upper incomplete gamma functions P(a, x) and
Q(a, x) = 1 - P(a, x), with input = a and other = x (kernels in kernels/special_gamma.py).

As in torch, both arguments must be tensors (no Python numbers), they broadcast and promote,
and only floating results have a kernel. Only `other` has a derivative, d/dx P(a, x) =
x^(a-1) e^(-x) / Gamma(a), in torch's form exp((a - 1) log x - x - lgamma(a)), written in ops
so that it differentiates again, in x and (through lgamma's digamma) in a; the derivative for
`input` raises torch's NotImplementedError when backward reaches it, and forward-mode AD
refuses both ops (forward_ad.NO_FORWARD).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from retrograd._ops.arg_check import not_tensor, type_name
from retrograd._ops.kernels import special_gamma as K
from retrograd._ops.layout import binary, inplace_of, promote_args
from retrograd._ops.pointwise import exp, log
from retrograd._ops.registry import op, register_method
from retrograd._ops.special_digamma import lgamma
from retrograd._ops.unique import _no_derivative
from retrograd._tensor import Tensor

NOT_TENSOR = "{}(): argument '{}' (position {}) must be Tensor, not {}"


def _density(a: Tensor, x: Tensor) -> Tensor:
    """d/dx P(a, x), as torch writes it."""
    return exp((a - 1) * log(x) - x - lgamma(a))


def _tensors_only(name: str, kernel: Callable) -> Callable:
    """The forward: torch's TypeError for a Python number (checked before promotion, which
    would turn an int into a float), then promotion and the broadcasting kernel."""
    compute = binary(kernel)

    def forward(a, x):
        for position, (arg, value) in enumerate((("input", a), ("other", x)), 1):
            if type(value) is not np.ndarray:
                raise TypeError(NOT_TENSOR.format(name, arg, position, type_name(value)))
        return compute(*promote_args((a, x), (0, 1)))

    forward.__name__ = name
    return forward


def _other_is_tensor(name: str) -> Callable:
    """The in-place method's own check (self is the tensor it is called on)."""

    def check(dst, x) -> None:
        if type(x) is not np.ndarray:
            raise TypeError(NOT_TENSOR.format(name, "other", 1, type_name(x)))

    return check


def _method(fn: Callable, name: str) -> Callable:
    """Tensor.<name>(other): counts `other` as argument 1 in torch's TypeError."""

    def method(self: Tensor, other: Tensor) -> Tensor:
        if not isinstance(other, Tensor):
            raise not_tensor(name, {"other": other})
        return fn(self, other)

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = fn.__doc__
    return method


igamma = op("igamma(Tensor self, Tensor other) -> Tensor", _tensors_only("igamma", K.igamma),
            grads={"self": _no_derivative("igamma: input"),
                   "other": lambda grad, self, other: grad * _density(self, other)},
            method=False)
igammac = op("igammac(Tensor self, Tensor other) -> Tensor",
             _tensors_only("igammac", K.igammac),
             grads={"self": _no_derivative("igammac: input"),
                    "other": lambda grad, self, other: -grad * _density(self, other)},
             method=False)
register_method("igamma", _method(igamma, "igamma"))
register_method("igammac", _method(igammac, "igammac"))

igamma_ = inplace_of(igamma, check=_other_is_tensor("igamma_"))
igammac_ = inplace_of(igammac, check=_other_is_tensor("igammac_"))
