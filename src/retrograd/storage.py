"""Storages: the memory under a tensor and its views (torch's UntypedStorage / TypedStorage).

A tensor's memory is its root's: the root base of a view, or the tensor itself. The storage is
the bytes the root's array spans, unless the root was given a storage of its own by `set_` or
`resize_` (kept in its TensorMeta), which may be larger than the array. A storage object is a
window onto that memory (a 1-d uint8 array), made on request: two storages are the same memory
when their data_ptr()s agree, as in torch.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd import _shared_memory as shm
from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor

TYPED_STORAGE_DEPRECATED = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
    "only storage class. This should only matter to you if you are using storages directly.  To "
    "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")


class UntypedStorage:
    """A flat run of bytes on the CPU."""

    __slots__ = ("_bytes",)

    def __init__(self, size: Any = 0, *, device: Any = None) -> None:
        if isinstance(size, int):
            if size < 0:
                raise RuntimeError(f"Storage size must be non-negative, got {size}")
            self._bytes = np.zeros(size, np.uint8)
        else:
            self._bytes = np.array(list(size), dtype=np.uint8)

    @classmethod
    def _over(cls, raw: np.ndarray) -> UntypedStorage:
        s = cls.__new__(cls)
        s._bytes = raw
        return s

    def data_ptr(self) -> int:
        return self._bytes.__array_interface__["data"][0]

    def nbytes(self) -> int:
        return self._bytes.size

    def size(self) -> int:
        return self._bytes.size

    def __len__(self) -> int:
        return self._bytes.size

    def element_size(self) -> int:
        return 1

    @property
    def device(self):
        from retrograd._device import cpu

        return cpu

    @property
    def is_cuda(self) -> bool:
        return False

    def is_shared(self) -> bool:
        return shm.is_shared(self._bytes)

    def share_memory_(self) -> UntypedStorage:
        share_memory(self)
        return self

    def untyped(self) -> UntypedStorage:
        return self

    def cpu(self) -> UntypedStorage:
        return self

    def tolist(self) -> list:
        return self._bytes.tolist()

    def __getitem__(self, i):
        return self._bytes[i].tolist()

    def __setitem__(self, i, value) -> None:
        self._bytes[i] = value

    def fill_(self, value: int) -> UntypedStorage:
        self._bytes.fill(value)
        return self

    def copy_(self, src: Any, non_blocking: bool = False) -> UntypedStorage:
        src = src.untyped() if hasattr(src, "untyped") else src
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size mismatch, {self.nbytes()} vs {src.nbytes()}")
        self._bytes[:] = src._bytes
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage._over(self._bytes.copy())

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        tail = f"[retrograd.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"
        return f"{body}\n{tail}" if body else tail


class TypedStorage:
    """A storage seen as elements of one dtype (tensor.storage(); deprecated in torch too)."""

    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, untyped: UntypedStorage, dtype: D.dtype) -> None:
        self._untyped_storage = untyped
        self.dtype = dtype

    def _values(self) -> np.ndarray:
        raw = self._untyped_storage._bytes
        n = raw.size // self.dtype.itemsize
        return raw[:n * self.dtype.itemsize].view(self.dtype.np)

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self) -> bool:
        return False

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def share_memory_(self) -> TypedStorage:
        self._untyped_storage.share_memory_()
        return self

    def tolist(self) -> list:
        v = self._values()
        return v.astype(np.float64).tolist() if v.dtype.kind == "V" else v.tolist()

    def __getitem__(self, i):
        return self.tolist()[i] if isinstance(i, slice) else self._values()[i].item()

    def __setitem__(self, i, value) -> None:
        self._values()[i] = value

    def fill_(self, value) -> TypedStorage:
        self._values().fill(value)
        return self

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        tail = (f"[retrograd.storage.TypedStorage(dtype={self.dtype!r}, device=cpu) of size "
                f"{self.size()}]")
        return f"{body}\n{tail}" if body else tail


def _root(t: Tensor) -> Tensor:
    return t._view.base if t._view is not None else t


def explicit_storage(t: Tensor) -> UntypedStorage | None:
    """The storage set_ / resize_ gave t's root, or the one it shares as a detached view, if
    any."""
    meta = _root(t)._meta
    if meta is None:
        return None
    if meta.storage is None and meta.storage_from is not None:
        meta.storage = storage_of(meta.storage_from)
        meta.storage_from = None
    return meta.storage


def span_bytes(a: np.ndarray) -> np.ndarray:
    """A 1-d uint8 window onto the bytes `a` spans from its first element."""
    if a.size == 0:
        return np.empty(0, np.uint8)
    span = 1 + sum((n - 1) * (s // a.itemsize) for n, s in zip(a.shape, a.strides))
    flat = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(a.itemsize,))
    return flat.view(np.uint8)


def storage_nbytes(t: Tensor) -> int:
    """The size of t's storage in bytes: storage_of(t).nbytes(), without building it."""
    s = explicit_storage(t)
    if s is not None:
        return s.nbytes()
    a = _root(t)._data
    if a.size == 0:
        return 0
    return (1 + sum((n - 1) * (st // a.itemsize) for n, st in zip(a.shape, a.strides))) * \
        a.itemsize


def storage_of(t: Tensor) -> UntypedStorage:
    s = explicit_storage(t)
    if s is not None:
        return s
    return UntypedStorage._over(span_bytes(_root(t)._data))


def storage_offset(t: Tensor) -> int:
    """t's first element, counted in elements from the start of its storage."""
    s = explicit_storage(t)
    if s is None:
        from retrograd._autograd.views import storage_offset as root_relative

        return root_relative(t)
    return (t._data.__array_interface__["data"][0] - s.data_ptr()) // t._data.itemsize


def array_on(storage: UntypedStorage, np_dtype, offset: int, shape: tuple,
             strides: tuple) -> np.ndarray:
    """A tensor array over `storage` at element `offset` with element `strides`."""
    itemsize = np.dtype(np_dtype).itemsize
    start = offset * itemsize
    if 0 in shape:  # nothing is read: any offset is fine, NumPy wants one inside the buffer
        start = min(start, storage._bytes.size)
    return np.ndarray(shape, np_dtype, buffer=storage._bytes, offset=start,
                      strides=tuple(s * itemsize for s in strides))


_warned = []


def warn_typed_storage(stacklevel: int) -> None:
    """TypedStorage's deprecation warning, once per process as torch's."""
    if not _warned:
        _warned.append(True)
        _ws.warn(TYPED_STORAGE_DEPRECATED, UserWarning, stacklevel=stacklevel + 1)


def typed_storage(t: Tensor) -> TypedStorage:
    warn_typed_storage(3)
    return TypedStorage(storage_of(t), t.dtype)


def root_span(t: Tensor) -> np.ndarray | None:
    """For a root with a storage of its own: the elements from the root's first element to the
    storage's end (as_strided may reach memory beyond the root's array). None otherwise."""
    s = explicit_storage(t)
    if s is None:
        return None
    root = _root(t)._data
    start = root.__array_interface__["data"][0] - s.data_ptr()
    raw = s._bytes[start:]
    n = raw.size // root.itemsize
    return raw[:n * root.itemsize].view(root.dtype)


def root_shift(t: Tensor) -> int:
    """Where t's root starts in its storage, in elements: 0 unless set_ placed it at an offset
    (storage offsets are counted from the storage, view geometry from the root)."""
    s = explicit_storage(t)
    if s is None:
        return 0
    root = _root(t)._data
    return (root.__array_interface__["data"][0] - s.data_ptr()) // root.itemsize


def share_memory(holder: Tensor | UntypedStorage) -> None:
    """Move the memory holder's array is in (all of its root array's) into a shared segment, in
    place: every tensor and storage whose array views the same memory moves with it, so they
    keep aliasing (Tensor.share_memory_, UntypedStorage.share_memory_)."""
    share_memory_of([holder])


def share_memory_of(holders: list) -> None:
    """share_memory for several holders, finding the aliases of all of them in one pass over the
    live objects (Module.share_memory shares every parameter with one pass)."""
    roots = []
    for h in holders:
        a = h._data if isinstance(h, Tensor) else h._bytes
        if not shm.is_shared(a):
            root = shm.root_array(a)
            if not any(root is r for r in roots):
                roots.append(root)
    if not roots:
        return
    moves = [(root, *shm.copy_into_segment(root)) for root in roots]
    for h, root in _holders(roots):
        mapping, low = next((m, lo) for r, m, lo in moves if r is root)
        if isinstance(h, UntypedStorage):
            h._bytes = shm.moved(mapping, low, h._bytes)
        else:
            h._data = shm.moved(mapping, low, h._data)


# which attribute of an instance of each class holds its array (None: not a holder), filled as
# classes are met: the scan below then costs one dictionary look-up per live object
_HOLDER_FIELD: dict = {}


def _holder_field(cls: type) -> str | None:
    field = "_data" if issubclass(cls, Tensor) else "_bytes" if issubclass(
        cls, UntypedStorage) else None
    _HOLDER_FIELD[cls] = field
    return field


def _holders(roots: list) -> list:
    """(holder, root) for every live tensor and storage whose array views one of roots: one pass
    over the objects the collector tracks (sharing memory is a setup step; no object's address
    or reference count is read)."""
    out = []
    fields = _HOLDER_FIELD
    for o in gc.get_objects():
        cls = type(o)  # not isinstance: it would ask lazy module proxies for their __class__
        field = fields[cls] if cls in fields else _holder_field(cls)
        if field is None:
            continue
        arr = getattr(o, field, None)
        if arr is None:
            continue
        root = shm.root_array(arr)
        for r in roots:
            if root is r:
                out.append((o, r))
                break
    return out
