"""Indexing: Tensor.__getitem__/__setitem__, advanced indexing (index, index_put), gather/scatter,
index_select/index_add, masked_fill/masked_select, take.

Basic indices (ints, slices, None, Ellipsis) become chains of select/slice/unsqueeze views, as
torch's indexing does, so grad_fn names and view-ness match torch; the remaining tensor indices go
to one `index` call (IndexBackward0). Assignment takes the view and copies into it, or calls
index_put_ for tensor indices.

NumPy checks bounds itself; torch's exact error is worked out only after NumPy has failed, so
validation costs nothing on the success path.
"""

from __future__ import annotations

import operator

import numpy as np

from retrograd import _dtype as D
from retrograd import _errors as E
from retrograd import _warning_site as _ws
from retrograd._dims import wrap_dim
from retrograd._numpy_names import numpy_names
from retrograd._ops.kernels import scatter as KS
from retrograd._ops.kernels.add_at import add_at
from retrograd._ops.layout import torch_order
from retrograd._ops.overloads import overloaded
from retrograd._ops.pointwise import _no_derivative, _not_implemented_node
from retrograd._ops.registry import op, register, register_method
from retrograd._ops.shape import (
    _zeros,
    alias,
    select,
    slice_backward,
    slice_op,
    unsqueeze,
)
from retrograd._tensor import Tensor, _wrap

ZERO_DIM_INDEX = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                  "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
SLICE_0D = "slice() cannot be applied to a 0-dim tensor."
TOO_MANY = "too many indices for tensor of dimension {}"
BAD_INDEX_TYPE = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                  "are valid indices (got {})")
INDEX_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"
MASK_SHAPE = ("The shape of the mask {} at index {} does not match the shape of the indexed "
              "tensor {} at index {}")
INDEX_BROADCAST = "shape mismatch: indexing tensors could not be broadcast together with shapes {}"
NON_TUPLE = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
             "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this "
             "will be interpreted as tensor index, x[torch.tensor(seq)], which will result "
             "either in an error or a different result")
UINT8_INDEX = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool " \
    "instead."
PUT_DTYPE = ("Index put requires the source and destination dtypes match, got {} for the "
             "destination and {} for the source.")
PUT_SHAPE = "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of " \
    "shape {}"
SET_TYPE = "can't assign a {} to a {}"

_INT_INDEX = KS.INT_INDEX


def _legacy(dtype: np.dtype) -> str:
    return D.legacy_name(D.from_numpy_dtype(dtype))


# --- advanced indexing: index / index_put ------------------------------------------------------


def _np_key(a: np.ndarray, indices) -> list:
    """NumPy's key for torch's per-dim index list (None: the whole dim)."""
    key, used = [], 0
    for idx in indices:
        if idx is None:
            key.append(slice(None))
            used += 1
            continue
        dt = idx.dtype
        if dt.kind == "b":
            used += idx.ndim
        elif dt == np.uint8:
            _ws.warn(UINT8_INDEX, UserWarning, stacklevel=4)
            idx = idx.astype(bool)
            used += idx.ndim
        elif dt in _INT_INDEX:
            used += 1
        else:
            raise IndexError(INDEX_DTYPE)
        key.append(idx)
    if used > a.ndim:
        raise IndexError(f"too many indices for tensor of dimension {a.ndim} (got {used})")
    while key and type(key[-1]) is slice:
        key.pop()
    return key


def _expanded(a: np.ndarray, key: list) -> list:
    """Per-dim integer index arrays (masks replaced by their nonzero positions), checking masks."""
    out = []
    for k in key:
        if type(k) is slice:
            out.append(None)
        elif k.dtype.kind == "b":
            pos = len(out)
            for j in range(k.ndim):
                if pos + j >= a.ndim or k.shape[j] != a.shape[pos + j]:
                    raise IndexError(MASK_SHAPE.format(list(k.shape), j, list(a.shape), pos + j))
            out.extend(np.nonzero(k))
        else:
            out.append(k)
    return out + [None] * (a.ndim - len(out))


def _index_error(a: np.ndarray, key: list) -> Exception:
    """torch's error for a key NumPy rejected, checked in torch's order."""
    entries = _expanded(a, key)
    defined = [e for e in entries if e is not None]
    try:
        np.broadcast_shapes(*(e.shape for e in defined))
    except ValueError:
        shapes = ", ".join(str(list(e.shape)) for e in defined)
        return IndexError(INDEX_BROADCAST.format(shapes))
    nth = 0
    for d, e in enumerate(entries):
        if e is None:
            continue
        n = a.shape[d]
        bad = e[(e < -n) | (e >= n)]
        if bad.size:
            return IndexError(E.INDEX_RANGE.format(int(bad.flat[0]), nth, n))
        nth += 1
    return IndexError(TOO_MANY.format(a.ndim))


class _Geometry:
    """Shape and byte strides of one operand of torch's index kernel.

    `shape` is only read by layout.torch_order to zero the strides of size-1 dims; the strides
    here already follow TensorIterator (zero where the operand is broadcast, kept for a size-1
    dim the output shares), so `shape` is set to 2 everywhere.
    """

    __slots__ = ("shape", "strides", "ndim")

    def __init__(self, strides: tuple) -> None:
        self.shape, self.strides, self.ndim = (2,) * len(strides), strides, len(strides)


def _geometry(a: np.ndarray, key: list) -> tuple:
    """The output shape of a[key] and the operands of torch's index kernel: the input restrided
    to that shape and the broadcast index tensors reshaped to it."""
    entries = _expanded(a, key)
    pos = [d for d, e in enumerate(entries) if e is not None]
    bshape = np.broadcast_shapes(*(entries[d].shape for d in pos))
    order = list(range(a.ndim))
    if pos != list(range(pos[0], pos[-1] + 1)):  # not adjacent: indexed dims go first
        order = pos + [d for d in range(a.ndim) if entries[d] is None]
    shape = [a.shape[d] for d in order]
    strides = [a.strides[d] for d in order]
    before = next(i for i, d in enumerate(order) if entries[d] is not None)
    rest = before + len(pos)
    out_shape = tuple(shape[:before]) + bshape + tuple(shape[rest:])
    ops = [_Geometry(tuple(strides[:before]) + (0,) * len(bshape) + tuple(strides[rest:]))]
    for d in pos:
        b = np.broadcast_to(entries[d], bshape)
        lead = b.strides[0] * bshape[0] if bshape else b.itemsize
        st = (lead,) * before + b.strides + (b.itemsize,) * (len(out_shape) - len(bshape) - before)
        # a size-1 dim of an operand is a broadcast (stride 0) unless the output's is 1 too
        st = tuple(0 if (d < before or d >= before + len(bshape)) and out_shape[d] != 1 else x
                   for d, x in enumerate(st))
        ops.append(_Geometry(st))
    return out_shape, ops


def _torch_layout(a: np.ndarray, key: list, out: np.ndarray) -> np.ndarray:
    """Lay `out` out as torch's index kernel does: its TensorIterator orders the output's dims
    by the strides of the operands."""
    out_shape, ops = _geometry(a, key)
    if out_shape != out.shape or len(out_shape) < 2:
        return out
    perm = torch_order(out_shape, ops)[::-1]
    buf = np.empty([out_shape[d] for d in perm], out.dtype).transpose(np.argsort(perm))
    if buf.strides == out.strides:
        return out
    buf[...] = out
    return buf


def _index_forward(a, indices):
    key = _np_key(a, indices)
    if not key:
        return a.copy()
    arrays = [k for k in key if type(k) is not slice]
    try:
        if len(arrays) == 1 and arrays[0].dtype.kind != "b" and arrays[0].ndim:
            out = np.take(a, arrays[0], axis=len(key) - 1)
        else:
            out = a[tuple(key)]
    except IndexError:
        return _empty_or_raise(a, key)
    if a.flags.c_contiguous and all(k.flags.c_contiguous for k in arrays):
        return _row_major(out)
    return _torch_layout(a, key, out)


def _row_major(out: np.ndarray) -> np.ndarray:
    """`out` with torch's row-major strides, size-1 dims included (NumPy's flags ignore them)."""
    if not out.flags.c_contiguous:
        return np.ascontiguousarray(out)
    if out.ndim > 1 and 1 in out.shape and out.size:
        want, acc = [], out.itemsize
        for n in reversed(out.shape):
            want.append(acc)
            acc *= n
        want = tuple(reversed(want))
        if want != out.strides:
            return np.lib.stride_tricks.as_strided(out, out.shape, want)
    return out


def _empty_or_raise(a: np.ndarray, key: list) -> np.ndarray:
    # torch checks bounds only for the elements it reads: an empty result raises nothing
    try:
        out_shape = _geometry(a, key)[0]
    except ValueError:
        out_shape = ()
    if 0 in out_shape:
        return np.empty(out_shape, a.dtype)
    raise _index_error(a, key) from None


def _put_key(a: np.ndarray, indices) -> tuple:
    # masks as positions: ufunc.at and assignment then share one code path
    return tuple(e if e is not None else slice(None) for e in _expanded(a, _np_key(a, indices)))


def _index_put_into(a, indices, values, accumulate):
    if values.dtype != a.dtype:
        raise RuntimeError(PUT_DTYPE.format(_legacy(a.dtype), _legacy(values.dtype)))
    key = _put_key(a, indices)
    try:
        if accumulate:
            add_at(a, key, values)
        else:
            a[key] = values
    except IndexError:
        _empty_or_raise(a, _np_key(a, indices))  # nothing to write into an empty result
    except ValueError:
        shape = _geometry(a, _np_key(a, indices))[0]
        raise RuntimeError(PUT_SHAPE.format(list(values.shape), list(shape))) from None


def _index_put_forward(a, indices, values, accumulate):
    out = a.copy(order="K")
    _index_put_into(out, indices, values, accumulate)
    return out


def _index_put_self(grad, indices, accumulate):
    return grad if accumulate else index_put(grad, indices, _zeros((), grad), False)


index_op = op("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", _index_forward,
           grads={"self": lambda grad, self_shape, indices:
                  index_put(_zeros(self_shape, grad), indices, grad, True)},
           function=False, method=False)

_PUT_GRADS = {"self": _index_put_self, "values": lambda grad, indices: index_op(grad, indices)}

index_put = op("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) "
               "-> Tensor", _index_put_forward, grads=_PUT_GRADS)
index_put_ = op("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, "
                "bool accumulate=False) -> Tensor(a!)", _index_put_into,
                node="IndexPutBackward0", grads=_PUT_GRADS)


# --- Tensor.__getitem__ ------------------------------------------------------------------------


def _is_int(x) -> bool:
    return (type(x) is int or isinstance(x, np.integer)) and type(x) is not bool


def _as_sequence_tuple(index) -> bool:
    """torch's (NumPy's legacy) rule for reading a list index as a tuple of indices."""
    if not isinstance(index, (list, tuple)) or len(index) >= 32:
        return False
    return any(isinstance(i, (Tensor, list, tuple, slice, np.ndarray)) or i is None
               or i is Ellipsis for i in index)


def _index_tensor(obj) -> Tensor:
    """A list / NumPy array used as an index, as the tensor torch makes of it."""
    arr = np.asarray(obj)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind in "iu" and arr.dtype not in _INT_INDEX and arr.dtype != np.uint8:
        arr = arr.astype(np.int64)
    return _wrap(arr)


def _bool_index(value: bool) -> Tensor:
    return _wrap(np.zeros(1 if value else 0, np.int64))


def _specified_dims(items: tuple) -> int:
    n = 0
    for obj in items:
        if isinstance(obj, Tensor):
            n += obj._data.ndim if obj._data.dtype.kind == "b" or obj._data.dtype == np.uint8 \
                else 1
        elif obj is not None and obj is not Ellipsis and type(obj) is not bool:
            n += 1
    return n


def _select_item(t: Tensor, dim: int, idx: int, real_dim: int) -> Tensor:
    shape = t._data.shape
    if not shape and idx == 0:
        raise IndexError(ZERO_DIM_INDEX)
    if dim >= len(shape):  # a 0-dim tensor, or past the end after repeated Ellipsis
        raise IndexError(E.INDEX_RANGE.format(idx, real_dim, 0))
    n = shape[dim]
    if not -n <= idx < n:
        raise IndexError(E.INDEX_RANGE.format(idx, real_dim, n))
    return select(t, dim, idx)


def _slice_parts(s: slice) -> tuple:
    step = 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start = None if s.start is None else operator.index(s.start)
    stop = None if s.stop is None else operator.index(s.stop)
    return start, stop, step


def _slice_item(t: Tensor, dim: int, s: slice, skip_full: bool) -> Tensor:
    start, stop, step = _slice_parts(s)
    # torch skips a slice spelled as the whole dim (0 or None to >= size), not e.g. -size:
    shape = t._data.shape
    if skip_full and step == 1 and not start and dim < len(shape) and (
            stop is None or stop >= shape[dim]):
        return t
    return slice_op(t, dim, start, stop, step)


def _basic(self: Tensor, items: tuple) -> tuple:
    """Apply the basic indices as views; returns (view, tensor indices by dim or None)."""
    nd = self._data.ndim
    specified = _specified_dims(items)
    if specified > nd:
        raise IndexError(TOO_MANY.format(nd))
    result, dim, tensors = self, 0, None
    for real_dim, obj in enumerate(items):
        if _is_int(obj):
            result = _select_item(result, dim, int(obj), real_dim)
        elif type(obj) is slice:
            result = _slice_item(result, dim, obj, True)
            dim += 1
        elif obj is Ellipsis:
            dim += nd - specified
        elif obj is None:
            result = unsqueeze(result, dim)
            dim += 1
        elif type(obj) is bool:
            result = unsqueeze(result, dim)
            tensors = _record(tensors, dim, _bool_index(obj))
            dim += 1
        else:
            t = obj if isinstance(obj, Tensor) else _sequence_index(obj)
            arr = t._data
            is_mask = arr.dtype.kind == "b" or arr.dtype == np.uint8
            if arr.ndim == 0 and arr.dtype.kind in "iub":
                if not is_mask:
                    result = _select_item(result, dim, int(arr), real_dim)
                    continue
                result = unsqueeze(result, dim)
                t = _bool_index(bool(arr))
                is_mask = False
            tensors = _record(tensors, dim, t)
            dim += arr.ndim if is_mask else 1
    return result, tensors


def _sequence_index(obj) -> Tensor:
    if isinstance(obj, (list, tuple, np.ndarray)):
        return _index_tensor(obj)
    raise IndexError(BAD_INDEX_TYPE.format(_type_name(obj)))


def _type_name(obj) -> str:
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _record(tensors, dim: int, t: Tensor) -> list:
    tensors = [] if tensors is None else tensors
    tensors.extend([None] * (dim + 1 - len(tensors)))
    tensors[dim] = t
    return tensors


def _items(index) -> tuple:
    if type(index) is tuple:
        return index
    if _as_sequence_tuple(index):
        _ws.warn(NON_TUPLE, UserWarning, stacklevel=3)
        return tuple(index)
    return (index,)


def getitem(self: Tensor, index):
    t = type(index)
    if t is int:
        return _select_item(self, 0, index, 0)
    if t is slice:
        if not self._data.shape:
            raise IndexError(SLICE_0D)
        return _slice_item(self, 0, index, False)
    if index is None:
        return unsqueeze(self, 0)
    if index is Ellipsis:
        return alias(self)
    if t is bool:
        return index_op(unsqueeze(self, 0), [_bool_index(index)])
    result, tensors = _basic(self, _items(index))
    if tensors is not None:
        return index_op(result, tensors)
    return alias(self) if result is self else result


register_method("__getitem__", getitem)


# --- Tensor.__setitem__ ------------------------------------------------------------------------


def _value_tensor(self: Tensor, value) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return _wrap(np.asarray(value).astype(self._data.dtype))
    raise TypeError(SET_TYPE.format(_type_name(value), self.type()))


def _strip_leading_ones(v: Tensor) -> Tensor:
    shape = v._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return v.view(shape[k:]) if k else v


def _copy_to(dst: Tensor, src: Tensor) -> None:
    if dst._data.shape == src._data.shape:
        dst.copy_(src)
    elif not src._data.ndim:
        dst.fill_(src)
    else:
        dst.copy_(_strip_leading_ones(src).expand(dst._data.shape))


def setitem(self: Tensor, index, value) -> None:
    value = _value_tensor(self, value)
    t = type(index)
    if index is False:
        return
    if index is Ellipsis:
        return _copy_to(self, value)
    if index is None or index is True:
        return _copy_to(unsqueeze(self, 0), value)
    if t is int:
        return _copy_to(_select_item(self, 0, index, 0), value)
    if t is slice:
        if not self._data.shape:
            raise IndexError(SLICE_0D)
        return _copy_to(_slice_item(self, 0, index, True), value)
    sliced, tensors = _basic(self, _items(index))
    if tensors is None:
        return _copy_to(sliced, value)
    index_put_(sliced, tensors, _strip_leading_ones(value))


register_method("__setitem__", setitem)


# --- gather / scatter / scatter_add ------------------------------------------------------------


def _pad_to(g: Tensor, shape: tuple) -> Tensor:
    """Embed g at the leading corner of zeros of `shape` (src larger than index in scatter)."""
    for k, (have, want) in enumerate(zip(g._data.shape, shape)):
        if have != want:
            size = g._data.shape[:k] + (want,) + g._data.shape[k + 1:]
            g = slice_backward(g, size, k, 0, have, 1)
    return g


gather = op("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
            KS.gather,
            grads={"self": lambda grad, self_shape, dim, index:
                   scatter_add(_zeros(self_shape, grad), dim, index, grad)})


def _masked_out(grad, dim, index):
    return _scatter_value_op(grad, dim, index, 0)


_SRC_GRAD = {"self": _masked_out,
             "src": lambda grad, dim, index, src_shape: _pad_to(gather(grad, dim, index),
                                                                src_shape)}
_VALUE_GRAD = {"self": _masked_out}
_ADD_GRAD = {"self": lambda grad: grad,
             "src": lambda grad, dim, index, src_shape: _pad_to(gather(grad, dim, index),
                                                                src_shape)}

_scatter_src_op = op("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                     KS.scatter_src, grads=_SRC_GRAD)
_scatter_value_op = op("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
                       KS.scatter_value, node="ScatterBackward1", grads=_VALUE_GRAD)
# scatter with `reduce`: torch has no derivative for these (its NotImplemented node)
_not_implemented_node(op(
    "scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
    KS.scatter_reduce_src, grads={"self, src": _no_derivative("scatter")}))
_not_implemented_node(op(
    "scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> "
    "Tensor", KS.scatter_reduce_value, grads={"self": _no_derivative("scatter")}))
scatter_add = op("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                 KS.scatter_add, grads=_ADD_GRAD)


def _reduce_into(a, dim, index, src, value, reduce) -> None:
    KS.check_reduce(reduce)
    KS.scatter_into(a, dim, index, src, value, False, "scatter", reduce)


op("scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
   lambda a, dim, index, src: KS.scatter_into(a, dim, index, src, None, False, "scatter"),
   node="ScatterBackward0", grads=_SRC_GRAD, function=False)
op("scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
   lambda a, dim, index, value: KS.scatter_into(a, dim, index, None, value, False, "scatter"),
   node="ScatterBackward1", grads=_VALUE_GRAD, function=False)
_not_implemented_node(op(
    "scatter_.reduce(Tensor(a!) self, int dim, Tensor index, Tensor src, *, str reduce) -> "
    "Tensor(a!)", lambda a, dim, index, src, reduce: _reduce_into(a, dim, index, src, None, reduce),
    node="ScatterBackward2", grads={"self, src": _no_derivative("scatter_")}, function=False))
_not_implemented_node(op(
    "scatter_.value_reduce(Tensor(a!) self, int dim, Tensor index, Scalar value, *, str reduce) "
    "-> Tensor(a!)",
    lambda a, dim, index, value, reduce: _reduce_into(a, dim, index, None, value, reduce),
    node="ScatterBackward3", grads={"self": _no_derivative("scatter_")}, function=False))
scatter_add_ = op(
    "scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
    lambda a, dim, index, src: KS.scatter_into(a, dim, index, src, None, True, "scatter"),
    node="ScatterAddBackward0", grads=_ADD_GRAD, function=False)
scatter = overloaded("scatter")


@numpy_names
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    a, i = input._data, indices._data
    if a.ndim != i.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {a.ndim} dimensions for input, and "
                           f"{i.ndim} dimensions for indices")
    d = wrap_dim(dim, a.ndim)
    idx_shape = np.broadcast_shapes(a.shape[:d] + (i.shape[d],) + a.shape[d + 1:], i.shape)
    src_shape = np.broadcast_shapes(i.shape[:d] + (a.shape[d],) + i.shape[d + 1:], a.shape)
    if idx_shape != i.shape:
        indices = indices.expand(idx_shape)
    if src_shape != a.shape:
        input = input.expand(src_shape)
    return gather(input, d, indices)


register("take_along_dim", take_along_dim, method=True)


# --- index_select / index_add ------------------------------------------------------------------


def _index_select_forward(a, dim, index):
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in _INT_INDEX:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return _index_select_forward(a.reshape(1), 0, index).reshape(())
    idx = index.reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= a.shape[d]):
        raise IndexError("index out of range in self")
    return np.ascontiguousarray(np.take(a, idx, axis=d))


index_select = op("index_select(Tensor self, int dim, Tensor index) -> Tensor",
                  _index_select_forward,
                  grads={"self": lambda grad, self_shape, dim, index:
                         index_add(_zeros(self_shape, grad), dim, index, grad)})


def _index_add_into(a, dim, index, source, alpha):
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {_legacy(index.dtype)} and size: "
                         f"{list(index.shape)}")
    if index.dtype not in _INT_INDEX:
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index")
    if source.dtype != a.dtype:
        raise RuntimeError(f"index_add_(): self ({_legacy(a.dtype)}) and source "
                           f"({_legacy(source.dtype)}) must have the same scalar type")
    d = wrap_dim(dim, a.ndim)
    a1, source1 = KS.as_1d(a, source)
    idx = index.reshape(-1)
    n_src = source1.shape[d] if source1.ndim > d else 1
    if idx.size != n_src:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {d}")
    if source1.ndim != a1.ndim or any(source1.shape[k] != a1.shape[k] for k in range(a1.ndim)
                                      if k != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(a.shape)} "
                           f"source.shape = {list(source.shape)}")
    KS.check_bounds(idx, d, a1.shape[d])
    vals = source1 if alpha == 1 else source1 * a.dtype.type(alpha)
    add_at(a1, (slice(None),) * d + (idx,), vals)


def _index_add_forward(a, dim, index, source, alpha):
    out = KS.fresh(a)
    _index_add_into(out, dim, index, source, alpha)
    return out


def _index_add_source(grad, dim, index, source_shape, alpha):
    g = index_select(grad, dim, index).reshape(source_shape)
    return g if alpha == 1 else g * alpha


_INDEX_ADD_GRADS = {"self": lambda grad: grad, "source": _index_add_source}

index_add = op("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) "
               "-> Tensor", _index_add_forward, grads=_INDEX_ADD_GRADS)
index_add_ = op("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, "
                "Scalar alpha=1) -> Tensor(a!)", _index_add_into, node="IndexAddBackward0",
                grads=_INDEX_ADD_GRADS, function=False)


# --- masked_fill / masked_select ---------------------------------------------------------------

_CPP_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
             "int16": "short int", "int8": "signed char", "uint8": "unsigned char"}


def _broadcast(a_shape: tuple, b_shape: tuple) -> tuple:
    try:
        return np.broadcast_shapes(a_shape, b_shape)
    except ValueError:
        nd = max(len(a_shape), len(b_shape))
        a = (1,) * (nd - len(a_shape)) + tuple(a_shape)
        b = (1,) * (nd - len(b_shape)) + tuple(b_shape)
        d = max(k for k in range(nd) if a[k] != b[k] and a[k] != 1 and b[k] != 1)
        raise RuntimeError(E.BROADCAST.format(a[d], b[d], d)) from None


def _check_mask(mask) -> None:
    if mask.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP_TYPE.get(mask.dtype.name, mask.dtype.name)}")


def _fill_value(value):
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
    return value


def _masked_fill_forward(a, mask, value):
    _check_mask(mask)
    value = _fill_value(value)
    shape = _broadcast(mask.shape, a.shape)
    out = np.array(np.broadcast_to(a, shape), order="C", copy=True)
    np.copyto(out, value, casting="unsafe", where=mask)
    return out


def _masked_fill_into(a, mask, value):
    _check_mask(mask)
    value = _fill_value(value)
    shape = _broadcast(mask.shape, a.shape)
    if shape != a.shape:
        raise RuntimeError(f"output with shape {list(a.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    np.copyto(a, value, casting="unsafe", where=mask)


def _masked_zero(grad, mask):
    return _masked_fill_scalar(grad, mask, 0)


_FILL_SCALAR_GRADS = {"self": _masked_zero}
# value's gradient as torch's where(mask, grad, 0).sum(): no masked_select, whose shape
# depends on the mask, so it batches under vmap
_FILL_TENSOR_GRADS = {"self": _masked_zero,
                      "value": lambda grad, mask: _masked_zero(grad, mask.logical_not()).sum()}

_masked_fill_scalar = op("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
                         _masked_fill_forward, grads=_FILL_SCALAR_GRADS)
_masked_fill_tensor = op("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
                         _masked_fill_forward, grads=_FILL_TENSOR_GRADS)
_masked_fill_scalar_ = op(
    "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
    _masked_fill_into, node="MaskedFillBackward0", grads=_FILL_SCALAR_GRADS, function=False)
_masked_fill_tensor_ = op(
    "masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
    _masked_fill_into, node="MaskedFillBackward1", grads=_FILL_TENSOR_GRADS, function=False)


def _masked_select_forward(a, mask):
    if mask.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast(mask.shape, a.shape)
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]


def _masked_select_backward(grad, self_shape, mask):
    shape = np.broadcast_shapes(self_shape, mask._data.shape)
    if mask._data.shape != shape:
        mask = mask.expand(shape)
    return index_put(_zeros(shape, grad), [mask], grad, False)


masked_select = op("masked_select(Tensor self, Tensor mask) -> Tensor", _masked_select_forward,
                   grads={"self": _masked_select_backward})


# --- take ----------------------------------------------------------------------------------------


def _take_forward(a, index):
    if index.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_legacy(index.dtype)}")
    try:
        return np.take(a.reshape(-1), index)
    except IndexError:
        n = a.size
        bad = index[(index < -n) | (index >= n)].flat[0]
        raise IndexError(f"out of range: tried to access index {int(bad)} on a tensor of {n} "
                         "elements.") from None


def _take_backward(grad, self_shape, index):
    n = int(np.prod(self_shape))
    flat = index_put(_zeros((n,), grad), [index.reshape(-1)], grad.reshape(-1), True)
    return flat.reshape(self_shape)


take = op("take(Tensor self, Tensor index) -> Tensor", _take_forward,
          grads={"self": _take_backward})
