"""Tensor.unfold(dimension, size, step): the sliding windows of one dimension, as a view.

The windows become a new last dimension; the dimension they slide along keeps one entry per
window (stride multiplied by step). Its backward, unfold_backward, adds each window's gradient
back at its place (windows overlap when step < size); the derivative of unfold_backward is
unfold again, so double backward needs no extra code.

The NumPy kernels the declarations run are in kernels/windows.py.
"""

from __future__ import annotations

from retrograd._ops.kernels.windows import (
    _unfold_backward_forward,
    _unfold_forward,
)
from retrograd._ops.registry import op

unfold_backward = op(
    "unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) "
    "-> Tensor", _unfold_backward_forward,
    grads={"grad_in": lambda grad, dim, size, step: unfold(grad, dim, size, step)},
    function=False, method=False)

unfold = op("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
            _unfold_forward,
            grads={"self": lambda grad, self_shape, dimension, size, step:
                   unfold_backward(grad, self_shape, dimension, size, step)},
            function=False)
