"""TFRecord framing with CRC-32C checksums: the container format of TensorBoard event files.

A record is the data's length (uint64, little-endian), the masked CRC-32C of those eight bytes,
the data, and the masked CRC-32C of the data.
"""

from __future__ import annotations

import struct

_POLY = 0x82F63B78  # CRC-32C (Castagnoli), reflected


def _make_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _make_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    # TFRecord stores checksums rotated and offset, so a CRC of data holding CRCs stays useful
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """One record holding `data`."""
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))
