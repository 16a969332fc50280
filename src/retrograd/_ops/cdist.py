"""cdist and dist: p-norm distances between the rows of two batches of matrices, and between two
tensors.

cdist dispatches as torch's does: p = 2 with many rows (more than 25 in either input), or
compute_mode='use_mm_for_euclid_dist', takes the matrix-product form _euclidean_dist
(EuclideanDistBackward0, then a view); anything else, and empty inputs, the direct kernel
_cdist_forward (CdistBackward0). Both gradients are written with retrograd ops, so they
differentiate again (torch's _cdist_backward does not). The NumPy kernels are in
kernels/cdist.py.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.distance import pnorm_weights
from retrograd._ops.kernels import cdist as K
from retrograd._ops.kernels.reduction import vector_norm
from retrograd._ops.layout import broadcast_error
from retrograd._ops.reduction import _vector_norm_backward
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


def _scalar_name(t) -> str:
    return D.SCALAR_NAMES[D.from_numpy_dtype(t.dtype).name]


def _check_floats(x1: np.ndarray, x2: np.ndarray, p: float) -> None:
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.kind not in "fV":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_scalar_name(x)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(x1)} but found "
                           f"{_scalar_name(x2)}")


def _cdist_forward_kernel(x1, x2, p, compute_mode):
    _check_floats(x1, x2, p)
    error = broadcast_error(x1.shape[:-2], x2.shape[:-2])
    if error is not None:
        raise error
    return K.cdist(x1, x2, p)


def _cdist_grads(grad: Tensor, x1: Tensor, x2: Tensor, p: float, result: Tensor) -> tuple:
    """Each distance's gradient goes to its row of x1 and, negated, to its row of x2, weighted
    as torch's kernel weights it (0 for a zero distance, and for p < 1 a zero difference)."""
    from retrograd._ops.creation import zeros_like

    if p == 0 or grad.numel() == 0 or x1.shape[-1] == 0:
        return zeros_like(x1), zeros_like(x2)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    with np.errstate(divide="ignore", invalid="ignore"):  # the entries `where` drops
        w = pnorm_weights(diff, result.unsqueeze(-1), grad.unsqueeze(-1), p)
    return w.sum(-2), -w.sum(-3)


_cdist_forward = op("_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
                    _cdist_forward_kernel, node="CdistBackward0",
                    grads={"x1, x2": _cdist_grads}, function=False, method=False)


def _euclidean_grads(grad: Tensor, x1: Tensor, x2: Tensor, result: Tensor) -> tuple:
    """d sqrt(|a|^2 - 2 a.b + |b|^2): the ratio grad / dist (0 where dist is 0) against the
    rows of the other input."""
    from retrograd._ops.pointwise import where

    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = where(result.eq(0), 0.0, grad / result)
    return (x1 * ratio.sum(-1, keepdim=True) - ratio.matmul(x2),
            x2 * ratio.sum(-2).unsqueeze(-1) - ratio.transpose(-1, -2).matmul(x1))


_euclidean_dist = op("_euclidean_dist(Tensor x1, Tensor x2) -> Tensor", K.euclidean_dist,
                     grads={"x1, x2": _euclidean_grads}, function="_euclidean_dist",
                     method=False)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of x1 and each row of x2 (batch dims broadcast)."""
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _MODES[compute_mode]
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    p = float(p)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mm = p == 2 and (mode == 1 or (mode is None and (r1 > 25 or r2 > 25)))
    if x1.numel() == 0 or x2.numel() == 0 or not mm:
        return _cdist_forward(x1, x2, p, mode)
    _check_floats(x1._data, x2._data, p)
    error = broadcast_error(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    if error is not None:
        raise error
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    shape = list(batch) + [r1, r2]
    if math.prod(batch) == 1:
        return _euclidean_dist(x1, x2).view(shape)
    cols = x1.shape[-1]
    left = x1.expand(list(batch) + [r1, cols]).reshape(-1, r1, cols)
    right = x2.expand(list(batch) + [r2, cols]).reshape(-1, r2, cols)
    return _euclidean_dist(left, right).view(shape)


register("cdist", cdist)


# --- dist ----------------------------------------------------------------------------------------


def _dist_forward(a, b, p):
    error = broadcast_error(a.shape, b.shape)
    if error is not None:
        raise error
    if a.dtype.kind not in "fV":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_scalar_name(a)} instead.")
    return vector_norm(np.subtract(a, b), p, None, False, None)


def _dist_grads(grad: Tensor, self: Tensor, other: Tensor, p, result: Tensor,
                output_mask: tuple) -> tuple:
    part = _vector_norm_backward(grad, self - other, p, result, None, False)
    if part is None and output_mask[1]:
        # the 0-"norm" has no gradient; torch then fails negating it for `other`
        raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in "
                           "C++) for argument #0 'self'")
    return part, None if part is None else -part


dist = op("dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", _dist_forward, promote="all",
          grads={"self, other": _dist_grads})
