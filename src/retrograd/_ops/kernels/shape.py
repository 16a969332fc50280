"""NumPy kernels of views and copies that rearrange data: view/reshape size inference, expand,
permute, transpose, squeeze/unsqueeze, as_strided, select/slice/diagonal and their backward
embeddings, unbind/split, cat/stack, repeat, flip, roll, tril/triu. retrograd._ops.shape
declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from retrograd import _errors as E
from retrograd._dims import wrap_dim


def internal_overlap(a: np.ndarray) -> bool:
    """Several elements share one memory location (an expanded tensor): torch refuses to write
    such a tensor in place."""
    return any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape))


def infer_size(shape: tuple, numel: int) -> tuple:
    if -1 not in shape and math.prod(shape) == numel and min(shape, default=0) >= 0:
        return shape  # nothing to infer, nothing wrong
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


def _viewable(a: np.ndarray, shape: tuple) -> bool:
    out = a.view()
    try:
        out.shape = shape
        return True
    except AttributeError:
        return False


def _expand_forward(a, size, implicit=False):
    size = tuple(size)
    if len(size) < a.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(a.shape)}}}, size={list(size)}): the number of "
            f"sizes provided ({len(size)}) must be greater or equal to the number of dimensions "
            f"in the tensor ({a.ndim})")
    lead = len(size) - a.ndim
    target = list(size)
    # checked from the last dimension to the first, so that the error names the one torch names
    for i in range(len(size) - 1, -1, -1):
        s = size[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   "leading, non-existing dimension " f"{i}")
            continue
        cur = a.shape[i - lead]
        if s == -1:
            target[i] = cur
        elif cur != s and cur != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur})"
                f" at non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor "
                f"sizes: {list(a.shape)}")
    target = tuple(target)
    if a.size and (a.flags.c_contiguous or a.flags.f_contiguous):
        # np.broadcast_to's view, built directly (7x cheaper); it stays writable where no two
        # elements share memory, as torch lets such an expanded tensor be written in place
        strides = (0,) * lead + tuple(st if t == n else 0
                                      for t, n, st in zip(target[lead:], a.shape, a.strides))
        out = np.ndarray(target, a.dtype, a, 0, strides)
        if internal_overlap(out):
            out.flags.writeable = False
        return out
    return np.broadcast_to(a, target)


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


def _transpose_forward(a, dim0, dim1):
    if a.ndim == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return a.view()
    return np.swapaxes(a, wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim))


def _t_forward(a):
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return a.T


def _unsqueeze_forward(a, dim):
    d = wrap_dim(dim, a.ndim + 1)
    shape = a.shape[:d] + (1,) + a.shape[d:]
    # torch keeps every stride and gives the new dim the next dim's extent (1 at the end);
    # NumPy's reshape may renormalize the strides of size-1 dims, so fall back when it does
    want = a.strides[d] * a.shape[d] if d < a.ndim else a.itemsize
    strides = a.strides[:d] + (want,) + a.strides[d:]
    out = a.reshape(shape)
    if out.strides != strides and a.size:
        out = _strided_view(a, shape, strides)
    return out


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


def _as_strided_rel_forward(a, size, stride, delta, storage_offset=None):
    # storage_offset: the user's argument, only kept by the node (delta is what places the view)
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


DUP_DIM = "dim {} appears multiple times in the list of dims"


def _index_arg(value) -> int:
    """An int argument given as int, NumPy integer or 0-dim integer tensor."""
    return value if type(value) is int else operator.index(value)


def _dims_arg(dims, ndim: int) -> list:
    """Wrap a list of dims, rejecting repeats with torch's message."""
    out = []
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in out:
            raise RuntimeError(DUP_DIM.format(w))
        out.append(w)
    return out


def _strided_view(a: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """A writable view of `a`'s memory (starting at a's first element) with byte strides."""
    return np.lib.stride_tricks.as_strided(a, shape, strides)


def _squeeze_dim_forward(a, dim):
    d = wrap_dim(dim, a.ndim)
    return np.squeeze(a, d) if a.ndim and a.shape[d] == 1 else a.view()


def _squeeze_dims_forward(a, dim):
    dims = _dims_arg(dim, a.ndim)
    if a.ndim == 0:
        return a.view()
    return np.squeeze(a, tuple(d for d in dims if a.shape[d] == 1))


def _select_forward(a, dim, index):
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, a.ndim)
    index = _index_arg(index)
    n = a.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(a.shape)} at dimension {d}")
    # the trailing Ellipsis keeps a 0-d result an array view, not a NumPy scalar
    return a[(slice(None),) * d + (index, Ellipsis)]


def _select_backward_forward(g, input_sizes, dim, index):
    out = np.zeros(tuple(input_sizes), g.dtype)
    _select_forward(out, dim, index)[...] = g
    return out


def _slice_bounds(start, end, step, n: int) -> tuple:
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start = 0 if start is None else _index_arg(start)
    end = n if end is None else _index_arg(end)
    if start < 0:
        start += n
    if end < 0:
        end += n
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    return start, end


def _slice_forward(a, dim, start, end, step):
    if a.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, a.ndim)
    start, end = _slice_bounds(start, end, step, a.shape[d])
    if start == end and a.size:
        return _empty_slice(a, d, start, step)
    return a[(slice(None),) * d + (slice(start, end, step), Ellipsis)]


def _empty_slice(a, d: int, start: int, step: int):
    # NumPy leaves an empty slice at the array's start; torch's storage offset points at `start`
    stride = [s // a.itemsize for s in a.strides]
    size = a.shape[:d] + (0,) + a.shape[d + 1:]
    delta = start * stride[d]
    stride[d] *= step
    return _as_strided_rel_forward(a, size, stride, delta)


def _slice_backward_forward(g, input_sizes, dim, start, end, step):
    out = np.zeros(tuple(input_sizes), g.dtype)
    _slice_forward(out, dim, start, end, step)[...] = g
    return out


def _diagonal_forward(a, offset, dim1, dim2):
    nd = a.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        n = max(min(a.shape[d1], a.shape[d2] - offset), 0)
    else:
        n = max(min(a.shape[d1] + offset, a.shape[d2]), 0)
    keep = [d for d in range(nd) if d != d1 and d != d2]
    shape = tuple(a.shape[d] for d in keep) + (n,)
    strides = tuple(a.strides[d] for d in keep) + (a.strides[d1] + a.strides[d2],)
    start = a
    if n:
        key = [slice(None)] * nd
        key[d1], key[d2] = max(-offset, 0), max(offset, 0)
        start = a[tuple(slice(k, None) if isinstance(k, int) else k for k in key)]
    return _strided_view(start, shape, strides)


def _diagonal_backward_forward(g, input_sizes, offset, dim1, dim2):
    out = np.zeros(tuple(input_sizes), g.dtype)
    _diagonal_forward(out, offset, dim1, dim2)[...] = g
    return out


def _unbind_forward(a, dim):
    if a.ndim == 0:
        raise IndexError(E.DIM_SCALAR.format(dim))
    d = wrap_dim(dim, a.ndim)
    pre = (slice(None),) * d
    return tuple(a[pre + (i, Ellipsis)] for i in range(a.shape[d]))


def _fill_missing_arrays(grads, shapes, like: np.ndarray) -> list:
    return [g if g is not None else np.zeros(s, like.dtype) for g, s in zip(grads, shapes)]


def _unbind_backward_array(grads, grad, self_shape, dim):
    """_unbind_backward on arrays (NOTE [Array formulas])."""
    d = wrap_dim(dim, len(self_shape))
    shape = self_shape[:d] + self_shape[d + 1:]
    return np.stack(_fill_missing_arrays(grads, [shape] * len(grads), grad), d)


def _split_pieces(a, sizes, d):
    pre = (slice(None),) * d
    out, start = [], 0
    for s in sizes:
        out.append(a[pre + (slice(start, start + s), Ellipsis)])
        start += s
    return tuple(out)


def _split_sizes(n: int, split_size: int) -> list:
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    if split_size == 0:
        if n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        return [0]
    count = max((n + split_size - 1) // split_size, 1)
    return [split_size] * (count - 1) + [n - split_size * (count - 1)]


def _split_forward(a, split_size, dim):
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, a.ndim)
    return _split_pieces(a, _split_sizes(a.shape[d], _index_arg(split_size)), d)


def _split_backward_array(grads, grad, self_shape, dim, sizes):
    """_split_backward on arrays (NOTE [Array formulas])."""
    d = wrap_dim(dim, len(self_shape))
    shapes = [self_shape[:d] + (s,) + self_shape[d + 1:] for s in sizes]
    return np.concatenate(_fill_missing_arrays(grads, shapes, grad), d)


def _split_dim_sizes(self_shape, split_size, dim) -> list:
    return _split_sizes(self_shape[wrap_dim(dim, len(self_shape))], split_size)


def _check_split_sizes(n: int, sizes, d: int) -> None:
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={list(sizes)}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={list(sizes)}")


def _split_with_sizes_forward(a, split_sizes, dim):
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, a.ndim)
    sizes = [_index_arg(s) for s in split_sizes]
    _check_split_sizes(a.shape[d], sizes, d)
    return _split_pieces(a, sizes, d)


def _common_dtype(arrays) -> np.dtype:
    from retrograd import _dtype as D

    first = arrays[0].dtype
    if all(a.dtype == first for a in arrays):
        return first
    out = D.from_numpy_dtype(first)
    for a in arrays[1:]:
        out = D.promote_types(out, D.from_numpy_dtype(a.dtype))
    return out.np


def _legacy_empty(a) -> bool:
    # torch.cat skips 1-d empty tensors whatever the other shapes (legacy behaviour)
    return a.ndim == 1 and a.shape[0] == 0


def _plain_arrays(arrays) -> bool:
    """Row-major arrays of one dtype and one (non-zero) rank, none a legacy 1-d empty: NumPy
    concatenates or stacks them as torch does, into a row-major result."""
    if not arrays:
        return False
    first = arrays[0]
    dt, nd = first.dtype, first.ndim
    for a in arrays:
        if a.dtype != dt or a.ndim != nd or not a.flags.c_contiguous or (nd == 1 and not a.size):
            return False
    return nd > 0


def _cat_forward(arrays, dim):
    if _plain_arrays(arrays) and -arrays[0].ndim <= dim < arrays[0].ndim:
        try:
            return np.concatenate(arrays, axis=dim)
        except ValueError:
            pass  # mismatched sizes: the checks below raise torch's error
    if not arrays:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dtype = _common_dtype(arrays)
    kept = [a for a in arrays if not _legacy_empty(a)]
    if not kept:
        return np.empty((0,), dtype)
    ref = kept[0]
    d = wrap_dim(dim, ref.ndim)
    for i, a in enumerate(arrays):
        if _legacy_empty(a):
            continue
        if a.ndim != ref.ndim:
            raise RuntimeError(E.CAT_DIMS.format(ref.ndim, a.ndim))
        for k in range(ref.ndim):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(E.CAT_SIZES.format(d, ref.shape[k], a.shape[k], i))
    shape = list(ref.shape)
    shape[d] = sum(a.shape[d] for a in kept)
    # an explicit row-major `out`: NumPy would follow the inputs' layout, torch does not
    return np.concatenate(kept, axis=d, out=np.empty(shape, dtype), casting="unsafe")


def _stack_forward(arrays, dim):
    if _plain_arrays(arrays) and -arrays[0].ndim - 1 <= dim <= arrays[0].ndim:
        try:
            return np.stack(arrays, axis=dim)
        except ValueError:
            pass  # mismatched shapes: the checks below raise torch's error
    if not arrays:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref)} "
                               f"at entry 0 and {list(a.shape)} at entry {i}")
    d = wrap_dim(dim, len(ref) + 1)
    shape = ref[:d] + (len(arrays),) + ref[d:]
    return np.stack(arrays, axis=d, out=np.empty(shape, _common_dtype(arrays)), casting="unsafe")


def _repeat_forward(a, repeats):
    reps = tuple(_index_arg(r) for r in repeats)
    if len(reps) < a.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    lead = len(reps) - a.ndim
    shape = reps[:lead] + tuple(r * s for r, s in zip(reps[lead:], a.shape))
    if any(s < 0 for s in shape):
        bad = next(s for s in shape if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: "
                           f"{list(shape)}")
    return np.tile(a, reps) if reps else a.copy()


def _flip_forward(a, dims):
    axes = _dims_arg(dims, a.ndim)
    if not axes or a.ndim == 0:
        return a.copy(order="K")
    return np.flip(a, axes).copy(order="K")


def _roll_forward(a, shifts, dims):
    shifts, dims = tuple(shifts), tuple(dims)
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        out = np.roll(a, shifts[0])
    else:
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:{len(dims)}")
        out = np.roll(a, shifts, tuple(wrap_dim(d, a.ndim) for d in dims))
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)


def _tri_forward(fn, name):
    def forward(a, diagonal):
        if a.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return np.ascontiguousarray(fn(a, diagonal))

    return forward
