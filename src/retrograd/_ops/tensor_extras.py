"""Small Tensor methods and aliases torch programs call: tril_ / triu_, fill_diagonal_,
sum_to_size, narrow_copy (NarrowCopyBackward0), adjoint, multiply / subtract and their in-place
forms, is_nonzero, is_same_size, is_signed.
"""

from __future__ import annotations

import numpy as np

from retrograd import _errors as E
from retrograd._ops.kernels.shape import _index_arg, _slice_bounds
from retrograd._ops.layout import inplace_of
from retrograd._ops.registry import op, register, register_method
from retrograd._ops.shape import size_args, slice_backward, tril, triu
from retrograd._tensor import Tensor

FILL_RANK = "dimensions must larger than 1"
FILL_EQUAL = "all dimensions of input must be of equal length"
NOT_EXPANDABLE = "size {{{}}} is not expandable to size {{{}}}."
NO_VALUES = "Boolean value of Tensor with no values is ambiguous"
MANY_VALUES = "Boolean value of Tensor with more than one value is ambiguous"

tril_ = inplace_of(tril)
triu_ = inplace_of(triu)


def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Tensor.fill_diagonal_: the main diagonal (every dim equal) set to fill_value, through
    strided views of self (CopySlices); `wrap` restarts it below a tall matrix's first block."""
    nd = self.dim()
    if nd < 2:
        raise RuntimeError(FILL_RANK)
    height, width = self.shape[0], self.shape[1]
    if nd > 2 and any(n != height for n in self.shape[1:]):
        raise RuntimeError(FILL_EQUAL)
    offset = self.storage_offset()
    step = sum(self.stride())
    size = min(height, width)
    self.as_strided((size,), (step,), offset).fill_(fill_value)
    if wrap and nd == 2 and height > width + 1:
        period = width + 1
        rest = (self.numel() + period - 1) // period - size
        self.as_strided((rest,), (step,), offset + self.stride(0) * period).fill_(fill_value)
    return self


def sum_to_size(self: Tensor, *size) -> Tensor:
    """Tensor.sum_to_size: self summed down to `size`, which it must expand to (self itself when
    the shapes agree)."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    shape = tuple(size_args(size))
    have = tuple(self.shape)
    lead = len(have) - len(shape)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(shape, have[lead:])):
        raise RuntimeError(NOT_EXPANDABLE.format(list(shape), list(have)))
    if shape == have:
        return self
    dims = list(range(lead)) + [lead + k for k, s in enumerate(shape)
                                if s == 1 and have[lead + k] != 1]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.view(shape) if lead else out


def _narrow_copy_forward(a, dim, start, length):
    if a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    from retrograd._dims import wrap_dim

    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    start, length = _index_arg(start), _index_arg(length)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    lo, hi = _slice_bounds(start, start + length, 1, n)
    return np.ascontiguousarray(a[(slice(None),) * d + (slice(lo, hi),)])


def _narrow_copy_grad(grad, self_shape, dim, start, length):
    from retrograd._dims import wrap_dim

    d = wrap_dim(dim, len(self_shape))
    begin = start + self_shape[d] if start < 0 else start
    return slice_backward(grad, self_shape, d, begin, begin + length, 1)


narrow_copy = op("narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor",
                 _narrow_copy_forward, grads={"self": _narrow_copy_grad})


def adjoint(input: Tensor) -> Tensor:
    """torch.adjoint: the conjugate transpose of the last two dims (a view)."""
    return input._matrix_transpose("adjoint()", E.ADJOINT_ZERO_DIM)


def is_nonzero(input: Tensor) -> bool:
    n = input.numel()
    if n == 0:
        raise RuntimeError(NO_VALUES)
    if n > 1:
        raise RuntimeError(MANY_VALUES)
    return bool(input._data.reshape(()))


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> bool:
    return input.dtype.is_signed


# torch's multiply / subtract are mul / sub under another name (the same nodes)
def multiply(input, other, *, out=None):
    from retrograd import mul

    return mul(input, other) if out is None else mul(input, other, out=out)


def subtract(input, other, *, alpha=1, out=None):
    from retrograd import sub

    return sub(input, other, alpha=alpha) if out is None else \
        sub(input, other, alpha=alpha, out=out)


def _multiply_method(self: Tensor, other) -> Tensor:
    return self.mul(other)


def _multiply_(self: Tensor, other) -> Tensor:
    return self.mul_(other)


def _subtract_method(self: Tensor, other, *, alpha=1) -> Tensor:
    return self.sub(other, alpha=alpha)


def _subtract_(self: Tensor, other, *, alpha=1) -> Tensor:
    return self.sub_(other, alpha=alpha)


register_method("fill_diagonal_", fill_diagonal_)
register_method("sum_to_size", sum_to_size)
register("adjoint", adjoint, method=True)
register("is_nonzero", is_nonzero, method=True)
register("is_same_size", is_same_size, method=True)
register("is_signed", is_signed, method=True)
register("multiply", multiply)
register("subtract", subtract)
register_method("multiply", _multiply_method)
register_method("multiply_", _multiply_)
register_method("subtract", _subtract_method)
register_method("subtract_", _subtract_)
