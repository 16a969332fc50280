"""cosine_similarity and pairwise_distance, composed from norms (as torch composes them).

cosine_similarity divides each input by its own norm before the dot product, each norm clamped
below at eps outside autograd (torch 2.13's formulation: |result| <= 1 and no overflow from
multiplying the norms); the clamp is invisible to the gradient, as in torch.

The NumPy kernels the declarations run are in kernels/distance.py.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd import _dtype as D
from retrograd._numpy_names import numpy_names
from retrograd._ops.kernels.distance import (
    _pairs,
    _pdist_forward_kernel,
)
from retrograd._ops.reduction import linalg_vector_norm
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor


@numpy_names
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1/|x1| * x2/|x2|) along dim, each norm at least eps."""
    common = D.result_type(x1, x2)
    if not common.is_floating_point:
        name = D.SCALAR_NAMES.get(str(common).rpartition(".")[2], str(common))
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{name}")
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = x1.expand(shape), x2.expand(shape)
    norms = []
    for x in (x1, x2):
        norm = linalg_vector_norm(x, 2, dim, True).clone()
        norm.detach().clamp_min_(eps)  # the data changes, the graph does not see it
        norms.append(norm)
    return ((x1 / norms[0]) * (x2 / norms[1])).sum(dim)


@numpy_names
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dimension of the broadcast inputs."""
    dim = max(x1.dim(), x2.dim()) - 1
    return linalg_vector_norm(x1 - x2 + eps, p, dim, keepdim)


for _fn in (cosine_similarity, pairwise_distance):
    register(_fn.__name__, _fn)
    register_functional(_fn.__name__, _fn)


# --- pdist -----------------------------------------------------------------------------------


def _pdist_grad(grad: Tensor, self: Tensor, p: float, result: Tensor) -> Tensor:
    """Each distance's gradient goes to its row i and, negated, to its row j. The cases follow
    torch's kernel (a zero distance, or a zero difference for p < 1, gives 0). Written with
    retrograd ops, so it differentiates again (torch's _pdist_backward does not)."""
    from retrograd._ops.creation import tensor, zeros_like
    from retrograd._ops.indexing import index_add, index_select

    n = self.shape[0]
    if n < 2 or p == 0:
        return zeros_like(self)
    i, j = (tensor(k, dtype=D.int64) for k in _pairs(n))
    diff = index_select(self, 0, i) - index_select(self, 0, j)
    w = pnorm_weights(diff, result.unsqueeze(-1), grad.unsqueeze(-1), p)
    return index_add(index_add(zeros_like(self), 0, i, w), 0, j, -w)


def pnorm_weights(diff, dist, g, p: float):
    """d||diff||_p / d diff times the incoming gradient g, for pairwise p-norm distances
    (pdist, cdist); 0 where the distance (or, for p < 1, the difference) is 0."""
    from retrograd._ops.pointwise import where

    if p == 1:
        return g * diff.sign()
    if p == math.inf:
        return g * diff.sign() * diff.abs().eq(dist)
    zero = dist.eq(0)
    if p < 2:
        if p < 1:
            zero = zero.logical_or(diff.eq(0))
        w = diff.sign() * diff.abs().pow(p - 1) * g / dist.pow(p - 1)
    elif p == 2:
        w = g * diff / dist
    else:
        w = diff * diff.abs().pow(p - 2) * g / dist.pow(p - 1)
    return where(zero, 0.0, w)


_pdist = op("_pdist_forward(Tensor self, float p=2) -> Tensor", _pdist_forward_kernel,
            node="PdistBackward0", grads={"self": _pdist_grad}, function=False, method=False)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between each pair of rows of a 2-D input (i < j, row-major)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if input.dtype.itemsize < 4:
        from retrograd._ops.layout import not_implemented

        raise not_implemented("pdist", input._data.dtype)
    return _pdist(input.contiguous(), p)


register("pdist", pdist)
register_functional("pdist", pdist)
