"""View ops (views share memory and the version counter with their base) and reshaping.

Schemas mark views with an alias annotation, `Tensor(a) self -> Tensor(a)`; the registry then
records the view on the output (retrograd._autograd.views).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from retrograd import _errors as E
from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor


def size_args(args: tuple) -> tuple:
    """Accept both f(2, 3) and f((2, 3)) / f(torch.Size) like torch's varargs size methods."""
    if len(args) == 1 and isinstance(args[0], (Sequence, np.ndarray)) and not isinstance(
            args[0], Tensor):
        return tuple(int(s) for s in args[0])
    return tuple(int(s) for s in args)


def wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(E.DIM_RANGE.format(-n, n - 1, dim))
    return dim % n


def infer_size(shape: tuple, numel: int) -> tuple:
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(E.VIEW_SHAPE.format(list(shape), numel))
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(E.VIEW_SHAPE.format(list(shape), numel))
    return shape


def _view_forward(a, size):
    shape = infer_size(tuple(size), a.size)
    out = a.view()
    try:
        out.shape = shape
    except AttributeError:
        raise RuntimeError(E.VIEW_STRIDE) from None
    return out


_view = op("view(Tensor(a) self, int[] size) -> Tensor(a)", _view_forward,
           grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
           function=False, method=False)


def view(self: Tensor, *shape):
    from retrograd._dtype import dtype

    if len(shape) == 1 and isinstance(shape[0], dtype):
        raise NotImplementedError("Tensor.view(dtype) is not supported")
    return _view(self, size_args(shape))


register_method("view", view)


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return _view(self, other._data.shape)


register_method("view_as", view_as)


def _viewable(a: np.ndarray, shape: tuple) -> bool:
    out = a.view()
    try:
        out.shape = shape
        return True
    except AttributeError:
        return False


_reshape_copy = op("_reshape_copy(Tensor self, int[] size) -> Tensor",
                   lambda a, size: np.reshape(a, size, order="C").copy(),
                   node="UnsafeViewBackward0",
                   grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
                   function=False, method=False)


def reshape(input: Tensor, *shape) -> Tensor:
    size = infer_size(size_args(shape), input._data.size)
    if _viewable(input._data, size):
        return _view(input, size)
    return _reshape_copy(input, size)


register("reshape", reshape, method=True)


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return reshape(self, other._data.shape)


register_method("reshape_as", reshape_as)


def _expand_forward(a, size, implicit=False):
    size = tuple(size)
    if len(size) < a.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(a.shape)}}}, size={list(size)}): the number of "
            f"sizes provided ({len(size)}) must be greater or equal to the number of dimensions "
            f"in the tensor ({a.ndim})")
    lead = len(size) - a.ndim
    target = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   "leading, non-existing dimension " f"{i}")
            target.append(s)
        else:
            cur = a.shape[i - lead]
            if s == -1:
                target.append(cur)
            elif cur != s and cur != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) must match the existing size ({cur})"
                    f" at non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor "
                    f"sizes: {list(a.shape)}")
            else:
                target.append(s)
    return np.broadcast_to(a, tuple(target))


def _sum_to(grad, shape):
    from retrograd._ops.reduction_helpers import sum_to

    return sum_to(grad, shape)


_expand = op("expand(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a)",
             _expand_forward, grads={"self": lambda grad, self_shape: _sum_to(grad, self_shape)},
             function=False, method=False)


def expand(self: Tensor, *sizes) -> Tensor:
    return _expand(self, size_args(sizes))


register_method("expand", expand)


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return _expand(self, other._data.shape)


register_method("expand_as", expand_as)


def _inverse_perm(dims) -> list:
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return inv


def _permute_forward(a, dims):
    nd = a.ndim
    dims = [wrap_dim(d, nd) for d in dims]
    if len(dims) != nd:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
            f"to len(dims) = {len(dims)}")
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(a, dims)


_permute = op("permute(Tensor(a) self, int[] dims) -> Tensor(a)", _permute_forward,
              grads={"self": lambda grad, dims:
                     grad.permute(_inverse_perm([d % max(len(dims), 1) for d in dims]))},
              function=False, method=False)


def permute(input: Tensor, *dims) -> Tensor:
    return _permute(input, size_args(dims))


register("permute", permute, method=True)


def _transpose_forward(a, dim0, dim1):
    if a.ndim == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return a.view()
    return np.swapaxes(a, wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim))


transpose = op("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
               _transpose_forward,
               grads={"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)})
register_method("swapaxes", transpose)
register("swapaxes", transpose)
register_method("swapdims", transpose)
register("swapdims", transpose)


def _t_forward(a):
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return a.T


t = op("t(Tensor(a) self) -> Tensor(a)", _t_forward, grads={"self": lambda grad: grad.t()})


def _unsqueeze_forward(a, dim):
    return np.expand_dims(a, wrap_dim(dim, a.ndim + 1))


unsqueeze = op("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", _unsqueeze_forward,
               grads={"self": lambda grad, dim, self_shape: grad.reshape(self_shape)})


# --- as_strided ------------------------------------------------------------------------------


def _positions(size, stride, offset) -> np.ndarray:
    pos = np.full(tuple(size), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos


def _as_strided_grad_forward(g, out_size, out_stride, out_offset, in_size, in_stride, in_offset):
    """Scatter-add g from positions (out geometry) and gather at positions (in geometry)."""
    out_pos = _positions(out_size, out_stride, out_offset).ravel()
    in_pos = _positions(in_size, in_stride, in_offset)
    if in_pos.size == 0:
        return np.zeros(tuple(in_size), g.dtype)
    lo = min(int(out_pos.min()) if out_pos.size else 0, int(in_pos.min()))
    hi = max(int(out_pos.max()) if out_pos.size else 0, int(in_pos.max()))
    acc = np.bincount(out_pos - lo, weights=np.asarray(g, np.float64).ravel(),
                      minlength=hi - lo + 1)
    return acc[in_pos - lo].astype(g.dtype)


_as_strided_grad = op(
    "_as_strided_grad(Tensor grad_output, int[] out_size, int[] out_stride, int out_offset, "
    "int[] in_size, int[] in_stride, int in_offset) -> Tensor", _as_strided_grad_forward,
    node="AsStridedBackward0Backward0",
    grads={"grad_output": lambda grad, out_size, out_stride, out_offset, in_size, in_stride,
           in_offset: _as_strided_grad(grad, in_size, in_stride, in_offset, out_size, out_stride,
                                       out_offset)},
    function=False, method=False)


def _as_strided_rel_forward(a, size, stride, delta):
    itemsize = a.itemsize
    ptr = a.__array_interface__["data"][0] + delta * itemsize
    iface = {"shape": tuple(size), "strides": tuple(s * itemsize for s in stride),
             "typestr": a.__array_interface__["typestr"], "data": (ptr, False), "version": 3}
    if a.dtype.kind == "V":
        iface["descr"] = a.__array_interface__["descr"]
    holder = _Holder(iface, a)
    out = np.asarray(holder)
    return out.view(a.dtype) if out.dtype != a.dtype else out


class _Holder:
    """Gives NumPy an array interface at an arbitrary address inside `owner`'s memory."""

    def __init__(self, iface: dict, owner: np.ndarray) -> None:
        self.__array_interface__ = iface
        self.base = owner


_as_strided_rel = op(
    "_as_strided_rel(Tensor(a) self, int[] size, int[] stride, int delta) -> Tensor(a)",
    _as_strided_rel_forward, node="AsStridedBackward0",
    grads={"self": lambda grad, self_shape, self_strides, size, stride, delta:
           _as_strided_grad(grad, size, stride, delta, self_shape, self_strides, 0)},
    function=False, method=False)


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    from retrograd._autograd.views import root_storage
    from retrograd._autograd.views import storage_offset as offset_of

    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    own = offset_of(input)
    target = own if storage_offset is None else storage_offset
    needed = target + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    available = root_storage(input).size
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {target}, "
            f"and itemsize {input._data.itemsize} requiring a storage size of "
            f"{needed * input._data.itemsize} are out of bounds for storage of size "
            f"{available * input._data.itemsize}")
    return _as_strided_rel(input, size, stride, target - own)


register("as_strided", as_strided, method=True)
