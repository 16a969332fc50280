"""A protocol buffer wire encoder, just enough for TensorBoard's event messages.

Messages are written as bytes, field by field in field-number order (the order protobuf's own
serializers use). Scalar fields of proto3 messages are left out when they hold their default
value (zero, empty) unless the caller says the field has presence (a `oneof` member).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import numpy as np

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


def varint(value: int) -> bytes:
    """Base-128 varint; negative int64 values take ten bytes (two's complement), as protobuf."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return varint((number << 3) | wire_type)


def _float32_bits(value: float) -> bytes:
    # protobuf narrows a double to float the C way: out-of-range values become infinities
    with np.errstate(over="ignore"):
        return np.float32(value).astype("<f4").tobytes()


def double(number: int, value: float, present: bool = False) -> bytes:
    data = struct.pack("<d", float(value))
    if not present and data == b"\x00" * 8:
        return b""  # +0.0 is the default; -0.0 has other bits and is written
    return _key(number, _FIXED64) + data


def float32(number: int, value: float, present: bool = False) -> bytes:
    data = _float32_bits(value)
    if not present and data == b"\x00" * 4:
        return b""
    return _key(number, _FIXED32) + data


def int_field(number: int, value: int, present: bool = False) -> bytes:
    """int32, int64, uint32, bool and enum fields: all varints."""
    value = int(value)
    if not present and value == 0:
        return b""
    return _key(number, _VARINT) + varint(value)


def bytes_field(number: int, value: bytes, present: bool = False) -> bytes:
    if not present and not value:
        return b""
    return _key(number, _LENGTH) + varint(len(value)) + value


def string(number: int, value: str, present: bool = False) -> bytes:
    return bytes_field(number, value.encode("utf-8"), present)


def message(number: int, encoded: bytes) -> bytes:
    """A sub-message field: written whenever it is set, even when it is empty."""
    return _key(number, _LENGTH) + varint(len(encoded)) + encoded


def repeated_bytes(number: int, values: Iterable[bytes]) -> bytes:
    return b"".join(_key(number, _LENGTH) + varint(len(v)) + v for v in values)


def packed_doubles(number: int, values: Iterable[float]) -> bytes:
    data = np.asarray(list(values), dtype="<f8").tobytes()
    return bytes_field(number, data)


def packed_floats(number: int, values: Iterable[float]) -> bytes:
    data = b"".join(_float32_bits(v) for v in values)
    return bytes_field(number, data)


def packed_varints(number: int, values: Iterable[int]) -> bytes:
    data = b"".join(varint(int(v)) for v in values)
    return bytes_field(number, data)
