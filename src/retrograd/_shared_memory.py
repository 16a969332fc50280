"""Memory that other processes can map: what `Tensor.share_memory_()` moves a tensor into and
what `retrograd.multiprocessing` sends between processes.

A segment is an anonymous file (a memfd on Linux) mapped MAP_SHARED; its arrays are NumPy
arrays whose `base` is that mapping. A process that receives the file descriptor maps the same
pages, so a write in one process is read by every other one, as with torch's shared storages.
The descriptor stays open while the mapping lives, so the segment can be sent on again.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import tempfile
import weakref

import numpy as np

# mapping -> (its descriptor, its address), for as long as the mapping lives
_SEGMENTS: weakref.WeakKeyDictionary[mmap.mmap, tuple[int, int]] = weakref.WeakKeyDictionary()
# the file's identity (device, inode) -> its mapping in this process: a segment received again
# (or sent back to the process that made it) is the memory already mapped, as torch finds a
# storage it already has
_BY_FILE: dict[tuple[int, int], weakref.ref] = {}


def _forget(fd: int, file: tuple[int, int]) -> None:
    ref = _BY_FILE.get(file)
    if ref is not None and ref() is None:
        del _BY_FILE[file]
    os.close(fd)


def _register(fd: int, size: int) -> mmap.mmap:
    mapping = mmap.mmap(fd, size, flags=mmap.MAP_SHARED)
    # the address of the mapping's first byte: offsets of the arrays in it are relative to it
    address = np.ndarray((size,), np.uint8, buffer=mapping).ctypes.data
    st = os.fstat(fd)
    file = (st.st_dev, st.st_ino)
    _SEGMENTS[mapping] = (fd, address)
    _BY_FILE[file] = weakref.ref(mapping)
    weakref.finalize(mapping, _forget, fd, file)
    return mapping


def _anonymous_file() -> int:
    if hasattr(os, "memfd_create"):
        return os.memfd_create("retrograd-shared", os.MFD_CLOEXEC)
    # no memfd (macOS): a temporary file, unlinked at once, is as anonymous
    fd, path = tempfile.mkstemp(prefix="retrograd-shared-")
    os.unlink(path)
    return fd


def new_segment(nbytes: int) -> mmap.mmap:
    fd = _anonymous_file()
    size = max(nbytes, 1)  # an empty mapping cannot be made
    os.ftruncate(fd, size)
    return _register(fd, size)


def open_segment(fd: int) -> mmap.mmap:
    """Map a segment whose descriptor another process sent (the descriptor is kept), or give
    its mapping here if this process has it already (the descriptor is closed)."""
    st = os.fstat(fd)
    ref = _BY_FILE.get((st.st_dev, st.st_ino))
    known = ref() if ref is not None else None
    if known is not None:
        os.close(fd)
        return known
    return _register(fd, st.st_size)


def root_array(a: np.ndarray) -> np.ndarray:
    """The array at the end of a's chain of NumPy views: the one that owns (or borrows from a
    non-array) the memory a points into."""
    while True:
        b = a.base
        if not isinstance(b, np.ndarray):
            # as_strided's arrays borrow through a holder of the interface and the array
            b = getattr(b, "base", None) if hasattr(b, "__array_interface__") else None
            if not isinstance(b, np.ndarray):
                return a
        a = b


def segment_of(a: np.ndarray) -> tuple[mmap.mmap, int, int] | None:
    """(mapping, descriptor, address) of the segment a's memory is in, or None."""
    owner = root_array(a).base
    if not isinstance(owner, mmap.mmap):
        return None
    entry = _SEGMENTS.get(owner)
    if entry is None:
        return None
    return owner, entry[0], entry[1]


def is_shared(a: np.ndarray) -> bool:
    return segment_of(a) is not None


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def byte_span(a: np.ndarray) -> tuple[int, int]:
    """[low, high): the addresses of a's first and one past its last byte."""
    low = high = address(a)
    if a.size == 0:
        return low, high
    for n, st in zip(a.shape, a.strides):
        if st < 0:
            low += (n - 1) * st
        else:
            high += (n - 1) * st
    return low, high + a.itemsize


def copy_into_segment(root: np.ndarray) -> tuple[mmap.mmap, int]:
    """A new segment holding a copy of the bytes root spans, and the address they start at (so
    an array at address p in root's memory is at offset p - low in the segment)."""
    low, high = byte_span(root)
    mapping = new_segment(high - low)
    if high > low:
        ctypes.memmove(_SEGMENTS[mapping][1], low, high - low)
    return mapping, low


def array_in(mapping: mmap.mmap, offset: int, shape: tuple, dtype: np.dtype, strides: tuple,
             writeable: bool = True) -> np.ndarray:
    """The array at byte offset in the mapping."""
    out = np.ndarray(shape, dtype, buffer=mapping, offset=offset, strides=strides)
    if not writeable:
        out.flags.writeable = False  # a broadcast (expand) stays read-only
    return out


def moved(mapping: mmap.mmap, low: int, a: np.ndarray) -> np.ndarray:
    """a's twin in the segment copy_into_segment made of the memory starting at low."""
    return array_in(mapping, address(a) - low, a.shape, a.dtype, a.strides, a.flags.writeable)
