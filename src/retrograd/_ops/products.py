"""Products of whole tensors: kron and inner (torch composites), addr / addr_ (AddrBackward0)."""

from __future__ import annotations

from retrograd._ops.kernels import products as K
from retrograd._ops.layout import result_dtype, write_result
from retrograd._ops.linalg import _unsafe_view, tensordot
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

INNER_SHAPES = ("inner() the last dimension must match on both input tensors but got shapes {} "
                "and {}")


def kron(input: Tensor, other: Tensor) -> Tensor:
    """torch.kron: both operands padded to one rank, their dims interleaved with size-1 dims so
    that one broadcast product holds every block, then folded (UnsafeViewBackward0)."""
    nd = max(input.dim(), other.dim())
    a_shape = (1,) * (nd - input.dim()) + tuple(input.shape)
    b_shape = (1,) * (nd - other.dim()) + tuple(other.shape)
    a_view, b_view = [], []
    for n, m in zip(a_shape, b_shape):
        a_view += [n, 1]
        b_view += [1, m]
    product = input.reshape(a_view) * other.reshape(b_view)
    return _unsafe_view(product, [n * m for n, m in zip(a_shape, b_shape)])


def inner(input: Tensor, other: Tensor) -> Tensor:
    """torch.inner: a product over the last dims (a scalar operand multiplies)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(INNER_SHAPES.format(list(input.shape), list(other.shape)))
    return tensordot(input, other, ([-1], [-1]))


def _vec1_grad(grad, vec2, alpha):
    g = grad.mv(vec2)
    return g if alpha == 1 else g * alpha


def _vec2_grad(grad, vec1, alpha):
    g = grad.t().mv(vec1)
    return g if alpha == 1 else g * alpha


_ADDR_GRADS = {"self": lambda grad, beta: grad if beta == 1 else grad * beta,
               "vec1": _vec1_grad, "vec2": _vec2_grad}

addr = op("addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> "
          "Tensor", K.addr, promote="all", grads=_ADDR_GRADS)


def _addr_into(s, vec1, vec2, beta, alpha) -> None:
    K.check_addr_inplace(s, vec1, vec2, beta, alpha)
    # computed in the operands' common dtype, then cast into self (never to a wider kind)
    common = result_dtype([s, vec1, vec2]).np
    s_, v1, v2 = (a.astype(common, copy=False) for a in (s, vec1, vec2))
    write_result(s, K.addr(s_, v1, v2, beta, alpha))


addr_ = op("addr_(Tensor(a!) self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> "
           "Tensor(a!)", _addr_into, node="AddrBackward0", grads=_ADDR_GRADS, function=False)

register("kron", kron, method=True)
register("inner", inner, method=True)
