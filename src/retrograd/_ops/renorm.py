"""renorm and renorm_: each slice along dim rescaled so that its p-norm is at most maxnorm.

The gradient is torch's renorm_backward, written with retrograd ops (the norm's own backward
from the reduction family), so it differentiates again. The NumPy kernel is in
kernels/cdist.py (the distances and norms of rows).
"""

from __future__ import annotations

from retrograd._dims import wrap_dim
from retrograd._ops.kernels import cdist as K
from retrograd._ops.layout import inplace_of
from retrograd._ops.reduction import _vector_norm_backward, linalg_vector_norm
from retrograd._ops.registry import op
from retrograd._tensor import Tensor


def _renorm_forward(a, p, dim, maxnorm):
    p, maxnorm = float(p), float(maxnorm)
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if a.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {a.ndim} dimensions")
    d = wrap_dim(dim, a.ndim)
    if a.dtype.kind not in "fV":
        from retrograd._ops.kernels.reduction import NORM_DTYPE, scalar_name

        raise RuntimeError(NORM_DTYPE.format(scalar_name(a.dtype)))
    return K.renorm(a, p, d, maxnorm)


def _renorm_backward(grad: Tensor, self: Tensor, p, dim: int, maxnorm) -> Tensor:
    """Where a slice was rescaled by f = maxnorm / (norm + 1e-7): f grad minus f / (norm +
    1e-7) times the norm's gradient for the slice's <self, grad>; grad itself elsewhere."""
    from retrograd._ops.pointwise import where

    d = wrap_dim(dim, self.dim())
    others = [k for k in range(self.dim()) if k != d]
    norm = linalg_vector_norm(self, p, others, True)
    along = (self * grad).sum(others, keepdim=True)
    norm_grad = _vector_norm_backward(along, self, p, norm, others, True)
    inverse = (norm + 1e-7).reciprocal()
    factor = inverse * maxnorm
    return where(norm > maxnorm, factor * grad - (factor * inverse) * norm_grad, grad)


renorm = op("renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor", _renorm_forward,
            grads={"self": _renorm_backward})
renorm_ = inplace_of(renorm)
