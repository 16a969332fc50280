"""torch.special's orthogonal polynomials as ops: special_<name>(x, n) for Chebyshev T, U, V,
W and their shifted forms, Hermite H and He, Laguerre L and Legendre P (kernels in
kernels/special_polynomials.py). Each has torch's three overloads (Tensor x and n, a Python
number for either), promotes to a floating result as torch's binary ops do, and, as in torch,
is not differentiable: the result never requires grad.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd._ops.kernels.special_polynomials import KERNELS
from retrograd._ops.layout import pointwise, promoting
from retrograd._ops.registry import op
from retrograd._tensor import Tensor

_OVERLOADS: dict = {}  # name -> (tensor-tensor, scalar x, scalar n) ops

for _name, _kernel in KERNELS.items():
    _forward = pointwise(promoting(_kernel, (0, 1), to_float=True))
    _OVERLOADS[_name] = tuple(
        op(f"special_{_name}{overload}({args}) -> Tensor", _forward, method=False,
           function=False, differentiable_outputs=(False,))
        for overload, args in (("", "Tensor x, Tensor n"), (".x_scalar", "Scalar x, Tensor n"),
                               (".n_scalar", "Tensor x, Scalar n")))


def polynomial(name: str) -> Callable:
    """special.<name>(x, n, *, out=None): the overload the argument types pick."""
    both, x_scalar, n_scalar = _OVERLOADS[name]

    def special_fn(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
        if isinstance(input, Tensor):
            fn = both if isinstance(n, Tensor) else n_scalar
        elif isinstance(n, Tensor):
            fn = x_scalar
        else:
            raise TypeError(f"special_{name}() received an invalid combination of arguments - "
                            f"got ({type(input).__name__}, {type(n).__name__})")
        return fn(input, n) if out is None else fn(input, n, out=out)

    special_fn.__name__ = special_fn.__qualname__ = name
    special_fn.__doc__ = f"torch.special.{name}(input, n): the polynomial of order n at input."
    return special_fn
