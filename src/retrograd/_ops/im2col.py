"""im2col / col2im (F.unfold / F.fold): sliding 2-D blocks as columns, and columns summed back.

im2col turns an (N, C, H, W) input into (N, C*kh*kw, L): one column per block position, L the
number of blocks. col2im is its adjoint (overlapping blocks add up), so each op's derivative is
the other one and double backward needs no extra code.

The NumPy kernels the declarations run are in kernels/im2col.py.
"""

from __future__ import annotations

from retrograd._ops.kernels.im2col import (
    _col2im_forward,
    _im2col_forward,
    _pair,
)
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor

im2col = op("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, "
            "int[2] stride) -> Tensor", _im2col_forward,
            grads={"self": lambda grad, self_shape, kernel_size, dilation, padding, stride:
                   col2im(grad, self_shape[-2:], kernel_size, dilation, padding, stride)},
            function=False, method=False)

col2im = op("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
            "int[2] padding, int[2] stride) -> Tensor", _col2im_forward,
            grads={"self": lambda grad, kernel_size, dilation, padding, stride:
                   im2col(grad, kernel_size, dilation, padding, stride)},
            function=False, method=False)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding local blocks of a (N, C, H, W) or (C, H, W) input as columns."""
    return im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns of sliding blocks back into a (N, C, H, W) or (C, H, W) output."""
    return col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding),
                  _pair(stride))


register_functional("unfold", unfold)
register_functional("fold", fold)
