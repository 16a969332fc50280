"""cosine_similarity and pairwise_distance, composed from norms (as torch composes them).

cosine_similarity divides each input by its own norm before the dot product, each norm clamped
below at eps outside autograd (torch 2.13's formulation: |result| <= 1 and no overflow from
multiplying the norms); the clamp is invisible to the gradient, as in torch.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.reduction import linalg_vector_norm
from retrograd._ops.registry import register, register_functional
from retrograd._tensor import Tensor


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


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dimension of the broadcast inputs."""
    dim = max(x1.dim(), x2.dim()) - 1
    return linalg_vector_norm(x1 - x2 + eps, p, dim, keepdim)


for _fn in (cosine_similarity, pairwise_distance):
    register(_fn.__name__, _fn)
    register_functional(_fn.__name__, _fn)
