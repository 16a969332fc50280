"""Tensor: a NumPy array plus autograd metadata, with torch's API.

The array (`_data`) is the tensor's storage view: views of a tensor are NumPy views of its array,
so memory sharing is real. Ops and most methods are attached by the op registry
(retrograd._ops); this file holds the data structure and the methods that are not ops.

Invariant used by the hot path: `_requires_grad` is True exactly when the tensor is a leaf that
requires grad or has a grad_fn, so ops test one slot to decide whether to build graph.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from retrograd import _dtype as D
from retrograd import _errors as E
from retrograd import _warning_site as _ws
from retrograd._autograd import op_seam
from retrograd._autograd.hooks import HookDict, RemovableHandle, add_hook, warn_if_has_hooks
from retrograd._autograd.state import mode_stack as _modes
from retrograd._autograd.state import state
from retrograd._dims import wrap_dim as _wrap_dim
from retrograd._fields import UNSET, FieldTable, Fresh
from retrograd._layout import layout as _Layout
from retrograd._layout import strided as _strided
from retrograd._numpy_names import numpy_names_entry
from retrograd._safe_globals import object_state as _object_state  # (retrograd.save's too)
from retrograd._warn_always import warn_once


class VersionCounter:
    """Shared by a base and all its views; every in-place op bumps it.

    `last_op` and `last_site` name the in-place op that made the latest bump and the line that
    called it, so a failed saved-tensor version check can say who mutated the tensor.
    """

    # what a fresh one holds, and why the others start unset: VERSION_COUNTER_FIELDS
    __slots__ = ("version", "last_op", "last_site", "views")

    if TYPE_CHECKING:
        def __init__(self) -> None: ...  # made from VERSION_COUNTER_FIELDS below


# NOTE [Field tables]; the unset slots are read with getattr(vc, name, None)
VERSION_COUNTER_FIELDS = FieldTable(VersionCounter, "_VC", (
    ("version", "0", "bumped by every in-place op on the base or any of its views"),
    ("last_op", UNSET, "set by a bump (so a tensor's creation pays for one field only)"),
    ("last_site", UNSET, "set by a bump, with last_op: the line that called it"),
    ("views", UNSET, "weak references to views of a tensor that does not require grad, set "
     "only then (NOTE [Views of a tensor that starts to require grad])"),
))
VersionCounter.__init__ = VERSION_COUNTER_FIELDS.constructor(  # type: ignore[method-assign]
    "__init__", "self", target="self", qualname="VersionCounter.__init__")


class TensorMeta:
    """Rarely used per-tensor autograd fields, allocated on first use."""

    __slots__ = ("hooks", "post_acc_hooks", "retains_grad", "name", "retain_handle", "storage",
                 "storage_from", "grad_lock", "shape_marks", "grad_dtype")

    def __init__(self) -> None:
        self.hooks = None  # id -> leaf tensor pre-hook (_backward_hooks), read by AccumulateGrad
        self.post_acc_hooks = None
        self.retains_grad = False
        self.name = None
        self.retain_handle = None
        self.storage = None  # an UntypedStorage given by set_ / resize_ (retrograd.storage)
        # a detached view: the tensor whose storage this one's is (made into `storage` when
        # first asked for: detach itself stays cheap)
        self.storage_from = None
        self.grad_lock = None  # a leaf's lock for writing .grad (_autograd.accumulate_grad)
        # retrograd._dynamo's marks: {"dynamic" | "weak" | "static": set of dims, "range":
        # {dim: (min, max)}} (NOTE [Dynamic shapes])
        self.shape_marks = None
        # a leaf's grad_dtype (NOTE [grad_dtype]): FOLLOWS_DTYPE, a dtype, or None (any)
        self.grad_dtype = FOLLOWS_DTYPE


# NOTE [grad_dtype]
# A leaf's grad_dtype is the dtype its .grad must have: by default the leaf's own dtype; set to
# another dtype, the engine casts the gradients that reach the leaf to it (so hooks, .grad and
# autograd.grad all see that dtype), and an assigned .grad must have it; set to None, the
# engine casts nothing at the leaf and an assigned .grad may have any dtype. (The graph's own
# nodes still cast: a ToCopyBackward0 returns its input's dtype.)
FOLLOWS_DTYPE = "follows the tensor's dtype"


def leaf_grad_np_dtype(t: Tensor) -> np.dtype | None:
    """The NumPy dtype gradients reaching leaf t are cast to, None for no cast (NOTE
    [grad_dtype])."""
    meta = t._meta
    gd = FOLLOWS_DTYPE if meta is None else meta.grad_dtype
    if gd is FOLLOWS_DTYPE:
        return t._data.dtype
    return None if gd is None else gd.np


class Tensor:
    __slots__ = ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_grad", "_version_counter",
                 "_view", "_grad_acc", "_meta", "__weakref__")

    # Makes NumPy defer to Tensor's reflected operators (ndarray * Tensor -> Tensor.__rmul__).
    __array_priority__ = 1000

    def __init__(self, *args: Any, dtype: D.dtype | None = None, device: Any = None,
                 requires_grad: bool = False) -> None:
        """torch's legacy constructor: Tensor(2, 3) (uninitialised, default dtype),
        Tensor(sequence), Tensor(size), Tensor(tensor), Tensor(storage); see retrograd._legacy.
        dtype= and requires_grad= are retrograd's additions."""
        from retrograd._legacy import construct

        if device is not None:
            from retrograd._device import device as check_device

            check_device(device)  # only the CPU exists
        construct(self, args, dtype)
        if requires_grad:
            self.requires_grad = True

    # --- metadata -------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    # size and stride take x.size(axis=0), as torch binds them from op schemas (NOTE [NumPy
    # argument names])
    @numpy_names_entry
    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> D.dtype:
        return D._FROM_NP[self._data.dtype]

    @property
    def device(self):
        from retrograd._device import cpu

        return cpu

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_mps(self) -> bool:
        return False

    @property
    def is_xpu(self) -> bool:
        return False

    @property
    def layout(self) -> _Layout:
        return _strided

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    def nelement(self) -> int:
        return self._data.size

    def element_size(self) -> int:
        return self._data.itemsize

    @numpy_names_entry
    def stride(self, dim: int | None = None):
        a = self._data
        if a.size == 0 and 0 in a.strides:
            # NumPy gives some zero-size arrays zero strides; torch keeps row-major ones
            st, acc = [], 1
            for n in reversed(a.shape):
                st.append(acc)
                acc *= max(n, 1)
            st = tuple(reversed(st))
        else:
            st = tuple(s // a.itemsize for s in a.strides)
        if dim is None:
            return st
        return st[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self) -> int:
        from retrograd.storage import storage_offset

        return storage_offset(self)

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0]

    def untyped_storage(self):
        from retrograd.storage import storage_of

        return storage_of(self)

    def storage(self):
        from retrograd.storage import typed_storage

        return typed_storage(self)

    def storage_type(self) -> type:
        """The legacy storage class of this tensor's dtype (FloatStorage, ...)."""
        from retrograd._legacy_storage import storage_type

        return storage_type(self)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        if memory_format is None or memory_format == "contiguous_format":
            return _is_contiguous(self._data)
        from retrograd._memory_format import as_format, is_channels_last, is_contiguous_as

        fmt = as_format(memory_format)
        if not is_channels_last(fmt):  # preserve_format: torch answers for the standard layout
            return _is_contiguous(self._data)
        return is_contiguous_as(self._data.shape, self.stride(), fmt)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f" or self.dtype.category == D._FLOAT

    def is_complex(self) -> bool:
        return False

    def is_inference(self) -> bool:
        return self._version_counter is None

    def type(self, dtype: Any = None, non_blocking: bool = False):
        if dtype is None:
            return "retrograd." + self.dtype._legacy
        from retrograd._legacy import tensortype

        if isinstance(dtype, tensortype):  # FloatTensor, LongTensor, ...
            dtype = dtype.dtype
        if isinstance(dtype, str):
            resolved = op_seam.dtype_arg(dtype)
            if resolved is None:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = resolved
        return self.to(dtype)

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

    # every retrograd tensor is a dense CPU tensor: the other layouts' and devices' flags
    @property
    def is_sparse_csr(self) -> bool:
        return False

    @property
    def is_nested(self) -> bool:
        return False

    @property
    def is_mkldnn(self) -> bool:
        return False

    @property
    def is_xla(self) -> bool:
        return False

    @property
    def is_ipu(self) -> bool:
        return False

    @property
    def is_maia(self) -> bool:
        return False

    @property
    def is_mtia(self) -> bool:
        return False

    @property
    def is_vulkan(self) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return False

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    # --- autograd metadata ------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._grad_fn is not None:
            if value:
                return
            raise RuntimeError(E.REQUIRES_GRAD_NONLEAF)
        if value and not self.is_floating_point():
            raise RuntimeError(E.REQUIRES_GRAD_DTYPE)
        self._requires_grad = bool(value)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        from retrograd._autograd.assign_checks import NO_DELETE

        raise RuntimeError(NO_DELETE["requires_grad"])

    @property
    def _backward_hooks(self) -> dict | None:
        """A leaf's backward hooks, the dict itself (id -> hook), as torch exposes it; a
        non-leaf's hooks live on its grad_fn, and this is None unless a dict was assigned."""
        meta = self._meta
        return None if meta is None else meta.hooks

    @_backward_hooks.setter
    def _backward_hooks(self, hooks: dict | None) -> None:
        # torch replaces the tensor's own hooks with the dict (None clears them); a leaf's run
        # in backward, read from the dict then, so hooks added to it later run too
        if hooks is not None or self._meta is not None:
            self._get_meta().hooks = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        from retrograd._autograd.assign_checks import NO_DELETE

        raise RuntimeError(NO_DELETE["_backward_hooks"])

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        if self._view is not None:
            return _view_grad_fn(self)
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def grad_dtype(self) -> D.dtype | None:
        """The dtype .grad must have (NOTE [grad_dtype]); leaves only."""
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        meta = self._meta
        if meta is None or meta.grad_dtype is FOLLOWS_DTYPE:
            return self.dtype
        return meta.grad_dtype

    @grad_dtype.setter
    def grad_dtype(self, value: D.dtype | None) -> None:
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, D.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                               f"{type(value).__name__}")
        self._get_meta().grad_dtype = value
        node = self._grad_acc() if self._grad_acc is not None else None
        if node is not None:  # a graph built before: its leaf node casts to the new dtype
            node._output_meta = ((self._data.shape, leaf_grad_np_dtype(self)),)

    @property
    def grad(self) -> Tensor | None:
        if self._grad is None and self._grad_fn is not None and not self.retains_grad:
            _ws.warn(E.NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            from retrograd._autograd.assign_checks import check_grad

            check_grad(self, value)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    # NOTE [No __delattr__ on Tensor]
    # CPython routes attribute writes and deletions through one type slot: a class that defines
    # __delattr__ makes every attribute *write* on its instances go through Python-level code
    # (measured here: a slot write 20 ns -> 124 ns, a fresh tensor 0.38 us -> 1.7 us). So the
    # deletions torch refuses are refused by the properties' deleters instead (data,
    # requires_grad, _backward_hooks); `del t._grad_fn` cannot be intercepted without that
    # cost, and is left to the user's discretion (README: differences).

    @property
    def volatile(self) -> bool:
        """Removed long ago in torch; reading it warns and gives False, as torch does."""
        _ws.warn(E.VOLATILE_GET_WARNING, UserWarning, stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value: bool) -> None:
        _ws.warn(E.VOLATILE_SET_WARNING, UserWarning, stacklevel=2)

    @property
    def retains_grad(self) -> bool:
        return self._meta is not None and self._meta.retains_grad

    @property
    def _version(self) -> int:
        if self._version_counter is None:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter.version

    @property
    def _base(self) -> Tensor | None:
        return None if self._view is None else self._view.base

    def _is_view(self) -> bool:
        return self._view is not None

    @property
    def name(self):
        return None if self._meta is None else self._meta.name

    def _get_meta(self) -> TensorMeta:
        if self._meta is None:
            self._meta = TensorMeta()
        return self._meta

    def retain_grad(self) -> None:
        if not self._requires_grad:
            raise RuntimeError(E.RETAIN_GRAD_NO_GRAD)
        if self.is_leaf:
            return
        meta = self._get_meta()
        if meta.retains_grad:
            return
        from retrograd._autograd.tensor_hooks import install_retains_grad

        install_retains_grad(self)

    def register_hook(self, hook: Callable) -> RemovableHandle:
        """hook(grad) runs when this tensor's gradient is computed; may return a new one."""
        if not self._requires_grad:
            raise RuntimeError(E.HOOK_NO_GRAD)
        fn = self.grad_fn
        if fn is None:
            meta = self._get_meta()
            if meta.hooks is None:
                meta.hooks = OrderedDict()  # torch's type for _backward_hooks
            return add_hook(meta.hooks, hook)
        return fn._register_tensor_prehook(self._output_nr, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """hook(tensor) runs after this leaf's .grad has been accumulated."""
        if not self._requires_grad:
            raise RuntimeError(E.HOOK_NO_GRAD)
        if not self.is_leaf:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        meta = self._get_meta()
        if meta.post_acc_hooks is None:
            meta.post_acc_hooks = HookDict()
        return add_hook(meta.post_acc_hooks, hook)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        from retrograd.autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing storage and version counter, with no autograd history."""
        if self.__class__ is not Tensor and _is_wrapper(self):
            return op_seam.detach_wrapper(self)  # NOTE [Wrapper subclasses]
        out = _wrap(self._data)
        out._version_counter = self._version_counter
        if self._view is not None or self._meta is not None and (
                self._meta.storage is not None or self._meta.storage_from is not None):
            # the detached tensor is no view for autograd, but its storage is still the whole
            # of its base's (its size, a storage offset, as_strided's reach), as in torch
            out._get_meta().storage_from = self
        return out

    def detach_(self) -> Tensor:
        from retrograd._autograd.views import detach_inplace

        out = detach_inplace(self)
        if op_seam.forward_ad_levels:  # a dual tensor loses its tangent too, as in torch
            op_seam.drop_tangents(self)
        return out

    @property
    def data(self) -> Tensor:
        # `.data` shares memory but not the version counter: autograd does not see changes to it.
        out = _wrap(self._data)
        return out

    @data.deleter
    def data(self) -> None:
        from retrograd._autograd.assign_checks import NO_DELETE

        raise RuntimeError(NO_DELETE["data"])

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor) or (self._requires_grad and
                                              not value.is_floating_point()):
            from retrograd._autograd.assign_checks import check_data

            check_data(self, value)
        self._data = value._data
        if self._meta is not None:
            # a storage set_ / resize_ (or a detached base) gave the old array
            self._meta.storage = self._meta.storage_from = None

    # --- conversion ----------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        if _modes:  # a tracer may refuse (NOTE [Per-thread dispatch modes])
            op_seam.data_dependent(self, "numpy")
        # torch allows it under no_grad: nothing done to the array can be recorded there
        if self._requires_grad and not force and state.grad_enabled:
            raise RuntimeError(E.NUMPY_REQUIRES_GRAD)
        if self.__class__ is not Tensor and _is_wrapper(self):
            raise RuntimeError(E.NUMPY_SUBCLASS)
        return self._data

    # NOTE [Array operands]
    # NumPy meets tensors in three ways, each as torch: converting one (np.asarray(t),
    # np.array(t)) goes through numpy(), so a tensor that requires grad is refused rather than
    # losing its history silently, and np.array(t) copies as NumPy asks; a ufunc applied to
    # tensors (np.sin(t), np.add.reduce(t)) gives a tensor back through __array_wrap__ (a bool
    # result as uint8, torch's choice); `t == a` and `t != a` compare with the array as with a
    # tensor (torch's `!=` says True whatever the values: Python's identity fallback).
    # Arithmetic with an array (t + a) takes it as the tensor it converts to, keeping t's
    # history (torch hands it to NumPy, which refuses t if it requires grad).
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # NOTE [Array operands]
        data = self.numpy()
        if dtype is not None and np.dtype(dtype) != data.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return data.astype(dtype)
        return data.copy() if copy else data

    def __array_wrap__(self, array: np.ndarray, context: Any = None,
                       return_scalar: bool = False) -> Any:
        """A NumPy ufunc applied to tensors gives a tensor, as torch's (bool results as uint8,
        torch's choice); a result retrograd has no dtype for stays an array."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        if array.dtype not in D._FROM_NP:
            return array
        return _wrap(np.ascontiguousarray(array) if array.ndim else array)

    def item(self):
        if _modes:
            op_seam.data_dependent(self, "item")
        if self.__class__ is not Tensor and _is_wrapper(self):
            return op_seam.item_wrapper(self)  # NOTE [Wrapper subclasses]
        if self._data.size != 1:
            raise RuntimeError(E.ITEM_NUMEL.format(self._data.size))
        v = self._data.reshape(()).item() if self._data.ndim else self._data.item()
        if self._data.dtype.kind == "V" or not isinstance(v, (bool, int, float)):
            return float(v)  # bfloat16 / float8 items come back as their NumPy scalar
        return v

    def tolist(self):
        if _modes:
            op_seam.data_dependent(self, "tolist")
        if self.__class__ is not Tensor and _is_wrapper(self):
            raise RuntimeError(E.TOLIST_SUBCLASS.format(type(self).__name__))
        if self._data.dtype.kind not in "biuf":
            return self._data.astype(np.float32).tolist()
        return self._data.tolist()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        if _modes:
            op_seam.data_dependent(self, "bool")
        if self._data.size != 1:
            raise RuntimeError(E.BOOL_AMBIGUOUS)
        return bool(self._data.reshape(()))

    def __float__(self) -> float:
        if _modes:
            op_seam.data_dependent(self, "float")
        if self.requires_grad:
            warn_once("float_requires_grad", E.FLOAT_OF_REQUIRES_GRAD, stacklevel=3)
        if self._data.size != 1:
            raise ValueError(E.SCALAR_CONVERSION)
        return float(self.item())

    def __int__(self) -> int:
        if _modes:
            op_seam.data_dependent(self, "int")
        if self._data.size != 1:
            raise ValueError(E.SCALAR_CONVERSION)
        return int(self.item())

    def __index__(self) -> int:
        if _modes:
            op_seam.data_dependent(self, "index")
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    # Python 2's names for bool() and int(), which torch's Tensor still has
    def __nonzero__(self) -> bool:
        return self.__bool__()

    def __long__(self) -> int:
        return self.__int__()

    def __delitem__(self, key: Any) -> None:
        raise TypeError("Tensor does not support deleting items")

    def __hash__(self) -> int:
        return id(self)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        from retrograd._tensor_str import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        # torch formats a 0-d tensor as its Python number, with or without a spec
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec) if spec else repr(self)

    def __reduce_ex__(self, protocol: int):
        warn_if_has_hooks(self)
        cls = self.__class__
        if cls is not Tensor and not _is_wrapper(self):
            # a subclass comes back as itself with its state, as torch's
            # (_rebuild_from_type_v2); wrapper subclasses pickle what they wrap themselves
            return (_rebuild_subclass,
                    (cls, np.array(self._data), self._requires_grad, _object_state(self)))
        return (_rebuild, (np.array(self._data), self._requires_grad))

    def __deepcopy__(self, memo: dict) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        out = type(self).__new__(type(self))
        _init(out, self._data.copy())
        out._requires_grad = self._requires_grad
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        # subclasses (nn.Parameter) carry a __dict__ of their own
        if hasattr(self, "__dict__"):
            import copy

            for k, v in self.__dict__.items():
                setattr(out, k, copy.deepcopy(v, memo))
        return out

    @property
    def T(self) -> Tensor:
        if self._data.ndim not in (0, 2):
            _ws.warn(E.T_DEPRECATED, UserWarning, stacklevel=2)
        return self.permute(*range(self._data.ndim - 1, -1, -1))

    @property
    def mT(self) -> Tensor:
        return self._matrix_transpose("mT", E.MT_ZERO_DIM)

    @property
    def H(self) -> Tensor:
        return self.T

    @property
    def mH(self) -> Tensor:
        return self._matrix_transpose("mH", E.MH_ZERO_DIM)

    def _matrix_transpose(self, name: str, zero_dim: str) -> Tensor:
        """The last two dims swapped (real: the adjoint is the transpose); a 0-d tensor is
        itself, with torch's deprecation warning (once, as torch's)."""
        nd = self._data.ndim
        if nd == 0:
            warn_once(name + "_zero_dim", zero_dim, stacklevel=4)
            return self
        if nd < 2:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of "
                               f"matrices. Got {nd}-D tensor.")
        return self.transpose(-2, -1)


class Size(tuple):
    """torch.Size: a tuple of ints that prints as `retrograd.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"retrograd.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))


# NOTE [Field tables]: a fresh Tensor, as _wrap, _init and every generated op entry point make it
TENSOR_FIELDS = FieldTable(Tensor, "_T", (
    ("_data", "{data}", "the ndarray: the tensor's storage, or a NumPy view of its base's"),
    ("_requires_grad", "False", "no history yet; an op that builds a node sets it with _grad_fn"),
    ("_grad_fn", "None", "a fresh tensor is a leaf; the op's node is set once it exists"),
    ("_output_nr", "0", "which output of _grad_fn this tensor is"),
    ("_grad", "None", "filled by AccumulateGrad"),
    ("_version_counter", Fresh(VERSION_COUNTER_FIELDS, "_state.inference", "vc"),
     "shared with views; inference tensors have none (is_inference)"),
    ("_view", "None", "a ViewInfo when the tensor is a view"),
    ("_grad_acc", "None", "a weak reference to the leaf's AccumulateGrad, made on first use"),
    ("_meta", "None", "TensorMeta: rarely used fields, allocated on first use"),
), ("data",), {"_state": state})


def _is_wrapper(t: Tensor) -> bool:
    """A Tensor whose class dispatches its ops (defines __torch_dispatch__): its own array holds
    no values (reading it directly would give zeros). The one definition; callers on hot paths
    test `t.__class__ is not Tensor` first."""
    cls = t.__class__
    known = _dispatching.get(cls)
    if known is None:
        # asked once per class (as torch decides when a tensor is made): a failed class
        # attribute lookup builds an AttributeError, which costs more than the op it guards
        known = _dispatching[cls] = getattr(cls, "__torch_dispatch__", None) is not None
    return known


_dispatching: dict[type, bool] = {Tensor: False}  # class -> whether it defines __torch_dispatch__


# (generated: a call would cost more than the stores; the op entry points inline the same text)
_wrap: Callable[[np.ndarray], Tensor] = TENSOR_FIELDS.constructor("_wrap", "data")
_wrap.__doc__ = "A fresh Tensor around an ndarray, no history (TENSOR_FIELDS)."
_init: Callable[[Tensor, np.ndarray], None] = TENSOR_FIELDS.constructor("_init", "t, data",
                                                                        target="t")
_init.__doc__ = "Give an allocated Tensor (a subclass's, a legacy constructor's) fresh fields."


def _bind_view_grad_fn(t: Tensor) -> Any:
    """A view's grad_fn (views.view_grad_fn), bound on the first call: the autograd core imports
    this module, so its function cannot be imported at the top, and an import statement in
    grad_fn would cost more than the read itself."""
    global _view_grad_fn
    from retrograd._autograd.views import view_grad_fn

    _view_grad_fn = view_grad_fn
    return view_grad_fn(t)


_view_grad_fn: Callable[[Tensor], Any] = _bind_view_grad_fn


def _rebuild(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = _wrap(arr)
    t._requires_grad = requires_grad
    return t


def _rebuild_subclass(cls: type, arr: np.ndarray, requires_grad: bool, state: Any) -> Tensor:
    """A pickled or saved instance of a Tensor subclass: its values, then its state (through
    the class's __setstate__ if it has one, as torch's _set_obj_state)."""
    t = object.__new__(cls)
    _init(t, arr)
    t._requires_grad = requires_grad
    setstate = getattr(cls, "__setstate__", None)
    if setstate is not None and setstate is not getattr(object, "__setstate__", None):
        setstate(t, state)
    elif state:
        t.__dict__.update(state)
    return t


def _is_contiguous(a: np.ndarray) -> bool:
    if a.flags.c_contiguous:
        return True
    # torch ignores the strides of size-1 dims
    expected = a.itemsize
    for size, st in zip(reversed(a.shape), reversed(a.strides)):
        if size != 1 and st != expected:
            return False
        expected *= size
    return True
