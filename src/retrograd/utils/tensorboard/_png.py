"""PNG encoding of 8-bit images with zlib, so images need no imaging library."""

from __future__ import annotations

import struct
import zlib

import numpy as np

# channels -> PNG colour type (gray+alpha, RGB, RGBA), the modes an 8-bit array maps to
_COLOR_TYPES = {2: 4, 3: 2, 4: 6}


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def _filtered_rows(raw: np.ndarray, bpp: int) -> np.ndarray:
    """Each row filtered by whichever of PNG's five filters leaves the smallest residuals
    (the heuristic of the PNG specification), with its filter-type byte in front."""
    rows = raw.astype(np.int16)
    left = np.zeros_like(rows)
    left[:, bpp:] = rows[:, :-bpp]
    up = np.zeros_like(rows)
    up[1:] = rows[:-1]
    up_left = np.zeros_like(rows)
    up_left[:, bpp:] = up[:, :-bpp]
    # Paeth predictor: whichever of left, up, up-left is closest to left + up - up-left
    p = left + up - up_left
    pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - up_left)
    paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, up_left))
    candidates = np.stack([rows, rows - left, rows - up, rows - (left + up) // 2, rows - paeth])
    candidates = (candidates & 0xFF).astype(np.uint8)
    cost = np.abs(candidates.view(np.int8).astype(np.int64)).sum(axis=2)
    choice = cost.argmin(axis=0)
    chosen = candidates[choice, np.arange(raw.shape[0])]
    return np.concatenate([choice.astype(np.uint8)[:, None], chosen], axis=1)


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of a height x width x channels uint8 array (2, 3 or 4 channels)."""
    height, width, channels = image.shape
    if channels not in _COLOR_TYPES:
        raise TypeError(f"Cannot handle this data type: (1, 1, {channels}), |u1")
    raw = np.ascontiguousarray(image, dtype=np.uint8).reshape(height, width * channels)
    data = _filtered_rows(raw, channels).tobytes() if height and width else b""
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(data, 6)) + _chunk(b"IEND", b""))
