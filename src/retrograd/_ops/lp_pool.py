"""Power-average pooling, (sum over the window of x^p)^(1/p), built as torch builds it: an
average pool of x^p times the window size, then the 1/p power (node PowBackward0); p = +-inf is
a max pool of |x|. A window whose sum is zero gets a zero gradient through relu's mask."""

from __future__ import annotations

import math

from retrograd._ops import pointwise as P
from retrograd._ops.activation import relu
from retrograd._ops.pooling import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from retrograd._ops.pooling3d import avg_pool3d, max_pool3d
from retrograd._ops.registry import register_functional
from retrograd._tensor import Tensor


def _window_count(kernel_size, n: int) -> int:
    if isinstance(kernel_size, (list, tuple)):
        sizes = list(kernel_size) * n if len(kernel_size) == 1 else list(kernel_size)
        return math.prod(sizes)
    return kernel_size ** n


def _lp_pool(input: Tensor, norm_type, kernel_size, stride, ceil_mode: bool, n: int,
             avg_pool, max_pool) -> Tensor:
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        if norm_type > 0:
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    powered = input.pow(norm_type)
    if stride is not None:
        out = avg_pool(powered, kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(powered, kernel_size, padding=0, ceil_mode=ceil_mode)
    scale = kernel_size if n == 1 else _window_count(kernel_size, n)
    return (P.sign(out) * relu(P.abs(out))).mul(scale).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, avg_pool1d, max_pool1d)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, avg_pool2d, max_pool2d)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, avg_pool3d, max_pool3d)


for _fn in (lp_pool1d, lp_pool2d, lp_pool3d):
    register_functional(_fn.__name__, _fn)
