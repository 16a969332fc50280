"""Byte-level helpers of retrograd.save / retrograd.load: storages, bounded reads, archive bounds.

- Storages: tensors that share memory (views, tied weights, expanded tensors) are saved as one
  byte buffer per block of memory, each tensor as (byte offset, shape, byte strides) into it.
- Bounded reads: every archive entry must be stored uncompressed (retrograd never writes
  anything else), so no entry can expand past the size its headers declare.
- Archive bounds: a stream may hold several checkpoints back to back; load reads the one that
  starts at the stream's position and leaves the stream just after it.
"""

from __future__ import annotations

import ctypes
import io
import struct
import zipfile
from typing import Any, BinaryIO

import numpy as np
from numpy.lib.array_utils import byte_bounds

_CHUNK = 1 << 20  # bytes read per call when filling a storage


class CorruptFile(Exception):
    """Raised inside load for anything malformed; turned into one RuntimeError."""


def expect(cond: bool, what: str) -> None:
    if not cond:
        raise CorruptFile(what)


# --- storages -----------------------------------------------------------------------------------

def _owner(arr: np.ndarray) -> np.ndarray:
    """The array at the end of arr's chain of bases (as_strided hides it behind a DummyArray)."""
    while True:
        b = arr.base
        if isinstance(b, np.ndarray):
            arr = b
        elif b is not None and isinstance(getattr(b, "base", None), np.ndarray):
            arr = b.base
        else:
            return arr


def _region(arr: np.ndarray) -> tuple[int, int]:
    """The byte range saved for arr: its whole block when NumPy owns the block (torch saves the
    whole storage of a view), else just the bytes arr spans."""
    if arr.size == 0:
        p = arr.__array_interface__["data"][0]
        return p, p
    owner = _owner(arr)
    if owner.flags.owndata:
        return byte_bounds(owner)
    return byte_bounds(arr)


def group_storages(arrays: list[np.ndarray]) -> tuple[list[np.ndarray], list[tuple[int, int]]]:
    """One uint8 buffer per block of memory the arrays live in (overlapping blocks merged), and
    for each array (storage index, byte offset). The buffers alias the arrays' memory; the
    caller keeps the arrays alive while it writes them."""
    regions = [_region(a) for a in arrays]
    order = sorted(range(len(arrays)), key=lambda i: regions[i])
    spans: list[list[int]] = []  # [lo, hi] of each storage
    where = [0] * len(arrays)
    for i in order:
        lo, hi = regions[i]
        if spans and hi > lo and lo < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
        where[i] = len(spans) - 1
    # storages numbered by first use, so a file does not depend on memory addresses
    number: dict[int, int] = {}
    for w in where:
        number.setdefault(w, len(number))
    buffers: list[np.ndarray] = [np.empty(0, np.uint8)] * len(spans)
    for w, n in number.items():
        lo, hi = spans[w]
        if hi > lo:
            buffers[n] = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(lo))
    places = [(number[where[i]], arrays[i].__array_interface__["data"][0] - spans[where[i]][0])
              for i in range(len(arrays))]
    return buffers, places


def view_of(storage: np.ndarray, dtype: np.dtype, offset: Any, shape: Any, strides: Any
            ) -> np.ndarray:
    """The array a tensor node describes, checked to lie inside its storage."""
    expect(isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape),
           "bad shape")
    expect(isinstance(strides, list) and len(strides) == len(shape)
           and all(type(s) is int for s in strides), "bad strides")
    expect(type(offset) is int and offset >= 0, "bad storage offset")
    if 0 in shape:
        return np.ndarray(shape, dtype, np.empty(0, np.uint8), 0, strides)
    lo = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + dtype.itemsize
    expect(lo >= 0 and hi <= storage.size, "tensor lies outside its storage")
    return np.ndarray(shape, dtype, storage, offset, strides)


# --- entries ------------------------------------------------------------------------------------

def check_entries(zf: zipfile.ZipFile, archive_size: int) -> None:
    """Refuses compressed or encrypted entries (a small archive could otherwise expand to any
    size while its headers declare a few bytes) and entries larger than the archive."""
    for info in zf.infolist():
        expect(info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 1,
               f"entry {info.filename!r} is compressed or encrypted; retrograd checkpoints "
               "hold only uncompressed entries, and compressed ones are never expanded")
        expect(info.compress_size == info.file_size,
               f"entry {info.filename!r} declares two different sizes")
        expect(info.header_offset + info.compress_size <= archive_size,
               f"entry {info.filename!r} extends past the end of the archive")


def read_exact(fh: BinaryIO, n: int) -> np.ndarray:
    """n bytes of an open entry into a fresh writable buffer, a chunk at a time."""
    out = np.empty(n, np.uint8)
    view = memoryview(out.data)
    got = 0
    while got < n:
        chunk = fh.read(min(_CHUNK, n - got))
        expect(len(chunk) > 0, "entry data truncated")
        view[got:got + len(chunk)] = chunk
        got += len(chunk)
    return out


# --- archive bounds -----------------------------------------------------------------------------

_EOCD = struct.Struct("<4s4H2LH")
_LOCATOR = struct.Struct("<4sLQL")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")


class Window(io.RawIOBase):
    """A read-only view of bytes [start, end) of a seekable stream, for zipfile."""

    def __init__(self, f: BinaryIO, start: int, end: int) -> None:
        super().__init__()
        self._f, self._start, self._end, self._pos = f, start, end, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = 0) -> int:
        base = (0, self._pos, self._end - self._start)[whence]
        expect(base + pos >= 0, "seek before the start of the archive")
        self._pos = base + pos
        return self._pos

    def read(self, n: int = -1) -> bytes:
        left = max(0, self._end - self._start - self._pos)
        n = left if n is None or n < 0 else min(n, left)
        self._f.seek(self._start + self._pos)
        data = self._f.read(n)
        self._pos += len(data)
        return data

    def readinto(self, b: Any) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)


def _eocd_end(f: BinaryIO, start: int, e: int, size: int) -> int | None:
    """If an end-of-central-directory record at e closes an archive that begins at start, the
    position just past the archive; else None."""
    f.seek(e)
    raw = f.read(_EOCD.size)
    if len(raw) < _EOCD.size:
        return None
    sig, _, _, _, _, cd_size, cd_offset, comment = _EOCD.unpack(raw)
    if sig != b"PK\x05\x06" or e + _EOCD.size + comment > size:
        return None
    cd_end = e
    if e - start >= _LOCATOR.size + _EOCD64.size:  # zip64 records, when present, come first
        f.seek(e - _LOCATOR.size - _EOCD64.size)
        rec = f.read(_EOCD64.size + _LOCATOR.size)
        if rec[:4] == b"PK\x06\x06" and rec[_EOCD64.size:_EOCD64.size + 4] == b"PK\x06\x07":
            cd_end = e - _LOCATOR.size - _EOCD64.size
            cd_size, cd_offset = _EOCD64.unpack(rec[:_EOCD64.size])[-2:]
    if cd_end == e and 0xFFFFFFFF in (cd_offset, cd_size):
        return None
    cd_start = cd_end - cd_size
    # writers record offsets from the archive's start or (Python's zipfile) from the stream's
    if cd_start < start or cd_offset not in (cd_start - start, cd_start):
        return None
    if cd_size >= 46:  # the first entry must begin at start: a later archive's end is not ours
        f.seek(cd_start)
        entry = f.read(46)
        first = struct.unpack_from("<L", entry, 42)[0] if entry[:4] == b"PK\x01\x02" else -1
        origin = start if cd_offset == cd_start else 0
        if first != 0xFFFFFFFF and first + (start - origin) != start:
            return None
    return e + _EOCD.size + comment


def archive_end(f: BinaryIO, start: int) -> int:
    """Where the zip archive beginning at `start` ends in seekable stream f."""
    size = f.seek(0, 2)
    # common case: the archive runs to the end of the stream (retrograd writes no comment)
    end = _eocd_end(f, start, size - _EOCD.size, size) if size - start >= _EOCD.size else None
    if end == size:
        return size
    pos, tail = start, b""
    while pos < size:
        f.seek(pos)
        block = tail + f.read(_CHUNK)
        base = pos - len(tail)
        i = block.find(b"PK\x05\x06")
        while i >= 0:
            end = _eocd_end(f, start, base + i, size)
            if end is not None:
                return end
            i = block.find(b"PK\x05\x06", i + 1)
        pos = base + len(block)
        tail = block[-3:]
    raise CorruptFile("no end of archive found")
