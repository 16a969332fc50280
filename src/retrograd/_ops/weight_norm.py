"""Weight normalization: w = g * v / ||v||, the norm taken over every dim except `dim`.

torch._weight_norm runs the fused _weight_norm_interface (node WeightNormInterfaceBackward0)
when dim is the first or the last dim and neither tensor is half precision; otherwise it
composes v * (g / norm_except_dim(v, 2, dim)) from ordinary ops, as torch does. The fused op's
gradient recomputes the norm from v with retrograd ops, so it differentiates again.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._numpy_names import numpy_names, numpy_names_entry
from retrograd._ops.kernels import reduction as K
from retrograd._ops.reduction import _vector_norm_backward, linalg_vector_norm
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor


def _others(ndim: int, dim: int) -> tuple:
    return tuple(k for k in range(ndim) if k != dim)


def _interface_forward(v: np.ndarray, g: np.ndarray, dim: int) -> tuple:
    ndim = v.ndim
    if not (dim == 0 or dim == ndim - 1):
        raise RuntimeError("fused kernels can only be applied for first or last dim")
    norms = np.sqrt(np.sum(np.square(v), axis=_others(ndim, dim), keepdims=True))
    # g holds one scale per slice along dim, whatever its own shape
    scale = g.reshape(norms.shape) / norms
    return (v * scale).astype(v.dtype, copy=False), norms.astype(v.dtype, copy=False)


def _interface_grads(grad: Tensor, v: Tensor, g: Tensor, dim: int) -> tuple:
    """With n the slice norms: dL/dg = <grad, v>_slice / n and
    dL/dv = (g / n) (grad - v <grad, v>_slice / n^2)."""
    others = list(_others(v.dim(), dim))
    norms = linalg_vector_norm(v, 2, others, True)
    along = (grad * v).sum(others, keepdim=True)
    g_b = g.reshape(norms.shape)
    grad_v = (g_b / norms) * (grad - v * (along / (norms * norms)))
    grad_g = (along / norms).reshape(g.shape)
    return grad_v, grad_g


_weight_norm_interface = op(
    "_weight_norm_interface(Tensor v, Tensor g, int dim=0) -> (Tensor, Tensor)",
    _interface_forward, grads={"v, g": _interface_grads}, differentiable_outputs=(True, False),
    method=False)


# at::norm(self, p) over the whole tensor: torch's NormBackward0 (retrograd.norm itself goes
# through linalg_vector_norm, as torch's Python-side Tensor.norm does)
_norm_whole = op(
    "_norm_whole(Tensor self, Scalar p=2) -> Tensor",
    lambda a, p: K.vector_norm(a, p, None, False, None),
    grads={"self": lambda grad, self, p, result: _vector_norm_backward(grad, self, p, result,
                                                                       None, False)},
    node="NormBackward0", function=False, method=False)


@numpy_names
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """torch.norm_except_dim: the pow-norm of v over every dim but `dim`, kept broadcastable
    (dim -1 means the norm of the whole tensor)."""
    if dim == -1:
        return _norm_whole(v, pow)
    last = v.dim() - 1
    if dim == 0:
        shape = [v.size(0)] + [1] * last
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(shape)
    if dim == last:
        shape = [1] * last + [v.size(last)]
        return v.contiguous().view(-1, v.size(last)).norm(pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """torch._weight_norm: v * (g / norm_except_dim(v, 2, dim))."""
    if v.device != g.device:
        raise RuntimeError("weight_norm: expected v_in and g_in to be on the same device, but "
                           f"v_in is on {v.device} and g_in is on {g.device}")
    v, g = v.contiguous(), g.contiguous()
    half = v.dtype in (D.float16, D.bfloat16) or g.dtype in (D.float16, D.bfloat16)
    if not half and (dim == 0 or dim == v.dim() - 1):
        return _weight_norm_interface(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))


register("norm_except_dim", norm_except_dim)
register("_weight_norm", numpy_names_entry(_weight_norm))
