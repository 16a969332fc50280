"""The shrink activations: hardshrink, softshrink (ops of their own in torch) and tanhshrink
(x - tanh(x), a composite whose node is SubBackward0 as in torch).

Both shrinks have the same gradient: grad outside [-lambd, lambd], zero inside. It is declared
as torch's *_backward ops, so double backward has torch's nodes too. The NumPy kernels are in
kernels/shrink.py.
"""

from __future__ import annotations

from retrograd._ops import pointwise as P
from retrograd._ops.kernels.activation import _float_only
from retrograd._ops.kernels.shrink import (
    hardshrink_kernel,
    shrink_backward_kernel,
    softshrink_kernel,
)
from retrograd._ops.layout import label_entry_points
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor


def _backward_op(name: str):
    """<name>_backward(grad_out, self, lambd): linear in grad_out, constant in self."""
    def grad_out_formula(grad, self, lambd):
        return backward(grad, self, lambd)

    backward = op(f"{name}_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor",
                  shrink_backward_kernel,
                  grads={"grad_out": grad_out_formula,
                         "self": lambda grad: P.mul(grad, 0.0)},
                  function=False, method=False)
    return backward


hardshrink_backward = _backward_op("hardshrink")
softshrink_backward = _backward_op("softshrink")

hardshrink = op("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
                _float_only("hardshrink_cpu", hardshrink_kernel),
                grads={"self": lambda grad, self, lambd: hardshrink_backward(grad, self, lambd)})

softshrink = op("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
                softshrink_kernel,
                grads={"self": lambda grad, self, lambd: softshrink_backward(grad, self, lambd)},
                function=False, method=False)


def tanhshrink(input: Tensor) -> Tensor:
    return input - P.tanh(input)


def _f_hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return hardshrink(input, lambd)


def _f_softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return softshrink(input, lambd)


register_functional("hardshrink", _f_hardshrink)
register_functional("softshrink", _f_softshrink)
register_functional("tanhshrink", tanhshrink)
label_entry_points([hardshrink, softshrink, hardshrink_backward, softshrink_backward])
