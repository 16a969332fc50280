"""In-place ops that change a tensor's geometry or memory, not its values: t_, transpose_,
squeeze_, unsqueeze_, as_strided_, resize_, resize_as_, set_.

NOTE [In-place view ops]
`b.t_()` behaves for autograd as `b = b.t()` with b's identity kept: the out-of-place view op is
run (building its node from b's current history when grad is on), then its array, node and, for
a view, its view record are moved into b, and b's version is bumped; so are its tangent under
forward AD and, for a wrapper class that names them in `_view_state`, its values (a batched
value's per-member values under vmap). torch names these nodes
with their own overload number (TBackward1 for t_), so the moved node is given a subclass of
that name. resize_ and set_ replace the array itself; torch refuses both on tensors that require
grad (resize_) or take part in autograd (set_ has no derivative).
"""

from __future__ import annotations

import operator

import numpy as np

from retrograd._autograd.state import state
from retrograd._ops import forward_ad
from retrograd._ops.inplace import bump_version, check_inplace
from retrograd._ops.registry import register_method
from retrograd._tensor import Tensor
from retrograd.storage import TypedStorage, UntypedStorage, array_on, storage_of, storage_offset

RESIZE_REQUIRES_GRAD = "cannot resize variables that require grad"
SET_NO_DERIVATIVE = "the derivative for 'set_' is not implemented."

# out-of-place node name -> the in-place op's node name in torch
_INPLACE_NODE_NAMES = {
    "TBackward0": "TBackward1", "TransposeBackward0": "TransposeBackward1",
    "SqueezeBackward0": "SqueezeBackward3", "SqueezeBackward1": "SqueezeBackward4",
    "SqueezeBackward2": "SqueezeBackward5", "UnsqueezeBackward0": "UnsqueezeBackward1",
    "AsStridedBackward0": "AsStridedBackward1",
}
_renamed: dict[type, type] = {}


def _rename_node(fn) -> None:
    cls = type(fn)
    new = _renamed.get(cls)
    if new is None:
        name = _INPLACE_NODE_NAMES.get(cls.__name__)
        if name is None:
            return
        new = _renamed[cls] = type(name, (cls,), {"__slots__": ()})
    fn.__class__ = new


def _adopt(self: Tensor, out: Tensor, op_name: str) -> Tensor:
    """Move the view op's result into self (NOTE [In-place view ops])."""
    from retrograd._autograd.tensor_hooks import move_retains_grad

    bump_version(self, op_name, depth=1)
    self._data = out._data
    for name in getattr(type(self), "_view_state", ()):  # a wrapper's values (vmap's batch)
        setattr(self, name, getattr(out, name))
    if forward_ad.levels:  # the view's tangent is the same view of self's old tangent
        tangent = forward_ad.tangent_of(out)
        if tangent is not None:
            forward_ad.set_tangent(self, tangent)
    built = out._grad_fn is not None and out._grad_fn is not self._grad_fn
    if self._view is not None:
        # how the view was made stays as it was (torch keeps it whatever the grad mode now)
        out._view.creation_meta = self._view.creation_meta
        self._view = out._view
        vc = self._version_counter
        if vc is not None:
            self._view.version = vc.version  # the moved node is current: no regeneration
    if built:
        old = self._grad_fn
        _rename_node(out._grad_fn)
        self._grad_fn = out._grad_fn
        self._output_nr = out._output_nr
        self._requires_grad = True
        move_retains_grad(self, old, self._grad_fn)
    return self


def _view_inplace(name: str, fn):
    def method(self: Tensor, *args, **kwargs) -> Tensor:
        check_inplace(self, False)
        return _adopt(self, fn(self, *args, **kwargs), name)

    method.__name__ = method.__qualname__ = name
    return method


def _t(self: Tensor) -> Tensor:
    if self._data.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self._data.ndim}D")
    return self.t()


register_method("t_", _view_inplace("t_", _t))
for _name in ("transpose_", "swapdims_", "swapaxes_"):
    register_method(_name, _view_inplace(_name, lambda self, d0, d1: self.transpose(d0, d1)))
register_method("squeeze_", _view_inplace(
    "squeeze_", lambda self, dim=None: self.squeeze() if dim is None else self.squeeze(dim)))
register_method("unsqueeze_", _view_inplace("unsqueeze_", lambda self, dim: self.unsqueeze(dim)))
register_method("as_strided_", _view_inplace(
    "as_strided_", lambda self, size, stride, storage_offset=None:
    self.as_strided(size, stride, storage_offset)))


# --- resize_ / set_ -------------------------------------------------------------------------


def _sizes(size: tuple) -> tuple:
    if len(size) == 1 and not isinstance(size[0], int) and hasattr(size[0], "__iter__"):
        size = tuple(size[0])
    out = tuple(operator.index(s) for s in size)
    if any(n < 0 for n in out):
        raise RuntimeError("numel: integer multiplication overflow")  # torch's check that fires
    return out


def _extent(shape: tuple, strides: tuple) -> int:
    """Elements a geometry reaches from its first element (0 when it has none)."""
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def _grown(storage: UntypedStorage, nbytes: int) -> UntypedStorage:
    """A new, larger storage starting with `storage`'s bytes (the rest uninitialised)."""
    grown = np.empty(nbytes, np.uint8)
    grown[:storage.nbytes()] = storage._bytes
    return UntypedStorage._over(grown)


def _set_storage(self: Tensor, storage: UntypedStorage | None, arr: np.ndarray) -> None:
    """self now lives in `storage` (None: keep its root's)."""
    self._data = arr
    if storage is not None:
        self._view = None  # its memory is no longer its old base's
        self._get_meta().storage = storage


def resize_(self: Tensor, *size, memory_format=None) -> Tensor:
    """torch's resize_: keeps the storage (and the values in it) when the new size fits, else
    moves to a larger storage holding the old bytes. Tensors sharing the old storage keep it
    (torch would grow the storage under them too)."""
    from retrograd._memory_format import as_format, format_strides

    if self._requires_grad and not state.inference:  # inference mode skips autograd's check
        raise RuntimeError(RESIZE_REQUIRES_GRAD)
    check_inplace(self, False)
    shape = _sizes(size)
    fmt = as_format(memory_format)
    if shape == self._data.shape and fmt is None:
        return self  # torch leaves the tensor (strides, version) alone
    strides = format_strides(shape, fmt if fmt is not None and fmt != "preserve_format"
                             else None)
    storage = storage_of(self)
    offset = storage_offset(self)
    itemsize = self._data.itemsize
    needed = (offset + _extent(shape, strides)) * itemsize
    if needed > storage.nbytes():
        storage = _grown(storage, needed)
        _set_storage(self, storage, array_on(storage, self._data.dtype, offset, shape, strides))
    else:
        arr = array_on(storage, self._data.dtype, offset, shape, strides)
        # a view keeps its base; a root remembers the storage it may have outgrown
        _set_storage(self, None if self._view is not None else storage, arr)
    bump_version(self, "resize_", depth=1)
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    return resize_(self, tuple(the_template._data.shape), memory_format=memory_format)


def _check_set(self: Tensor) -> None:
    check_inplace(self, False)
    if self._requires_grad and state.grad_enabled:
        raise RuntimeError(SET_NO_DERIVATIVE)


def set_(self: Tensor, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
    """set_(): empty; set_(tensor): share its memory and geometry; set_(storage, offset=0,
    size=None, stride=None): a geometry over a storage."""
    _check_set(self)
    np_dtype = self._data.dtype
    if source is None:
        storage = UntypedStorage(0)
        arr = array_on(storage, np_dtype, 0, (0,), (1,))
    elif isinstance(source, Tensor):
        if source._data.dtype != np_dtype:
            raise RuntimeError(f"Could not set tensor of type {_c_name(source.dtype)} to a "
                               f"tensor of type {_c_name(self.dtype)}")
        storage = storage_of(source)
        arr = source._data
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        storage = source.untyped()
        itemsize = np_dtype.itemsize
        shape = (storage.nbytes() // itemsize,) if size is None else _sizes((size,))
        if stride is None:
            from retrograd._memory_format import format_strides

            strides = format_strides(shape, None)
        else:
            strides = tuple(operator.index(s) for s in stride)
        needed = (storage_offset + _extent(shape, strides)) * itemsize
        if needed > storage.nbytes():  # torch grows the storage to fit
            storage = _grown(storage, needed)
        arr = array_on(storage, np_dtype, storage_offset, shape, strides)
    else:
        raise TypeError(f"set_() received an invalid combination of arguments - got "
                        f"({type(source).__name__}, ...)")
    _set_storage(self, storage, arr)
    # a leaf's next backward gets a new AccumulateGrad (its shape may have changed); graphs
    # built before keep the old node, reachable through the gradient edge taken then
    self._grad_acc = None
    bump_version(self, "set_", depth=1)
    return self


def _c_name(d) -> str:
    """c10's lower-case scalar type name (float, double, long, ...) for torch's messages."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}.get(d.name, d.name)


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Same memory, offset, sizes and strides."""
    return (self.data_ptr() == tensor.data_ptr() and self._data.shape == tensor._data.shape
            and self.stride() == tensor.stride()
            and storage_of(self).data_ptr() == storage_of(tensor).data_ptr())


register_method("resize_", resize_)
register_method("resize_as_", resize_as_)
register_method("set_", set_)
register_method("is_set_to", is_set_to)
