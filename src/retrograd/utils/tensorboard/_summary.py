"""Summary messages (TensorBoard's summary.proto) for each kind of data the writer logs, encoded
as torch.utils.tensorboard encodes them: the same fields, plugin names and tags."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from retrograd import _dtype
from retrograd._tensor import Tensor

from . import _proto as pb
from ._convert import convert_to_HWC, make_np
from ._png import encode_png

# tensorflow's DataType enum (types.proto)
DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_STRING = 1, 2, 3, 4, 5, 6, 7
DT_INT64, DT_BOOL, DT_BFLOAT16, DT_HALF = 9, 10, 14, 19


def summary(*values: bytes) -> bytes:
    """Summary{value=1 repeated Summary.Value}."""
    return b"".join(pb.message(1, v) for v in values)


def value(tag: str, *, simple_value: float | None = None, image: bytes | None = None,
          histo: bytes | None = None, audio: bytes | None = None, tensor: bytes | None = None,
          metadata: bytes | None = None) -> bytes:
    """Summary.Value; simple_value, image, histo, audio and tensor are one `oneof`: written
    when set."""
    out = pb.string(1, tag)
    if simple_value is not None:
        out += pb.float32(2, simple_value, present=True)
    if image is not None:
        out += pb.message(4, image)
    if histo is not None:
        out += pb.message(5, histo)
    if audio is not None:
        out += pb.message(6, audio)
    if tensor is not None:
        out += pb.message(8, tensor)
    if metadata is not None:
        out += pb.message(9, metadata)
    return out


def plugin_metadata(plugin_name: str, content: bytes = b"") -> bytes:
    """SummaryMetadata{plugin_data=1 PluginData{plugin_name=1, content=2}}."""
    return pb.message(1, pb.string(1, plugin_name) + pb.bytes_field(2, content))


def tensor_shape(shape: tuple[int, ...]) -> bytes:
    """TensorShapeProto{dim=2 repeated Dim{size=1}}."""
    return b"".join(pb.message(2, pb.int_field(1, size)) for size in shape)


def tensor_message(dtype: int, shape: tuple[int, ...] | None, values: bytes) -> bytes:
    """TensorProto: dtype=1, tensor_shape=2 (when given), then the already-encoded values."""
    out = pb.int_field(1, dtype)
    if shape is not None:
        out += pb.message(2, tensor_shape(shape))
    return out + values


# scalars ---------------------------------------------------------------------------------------

def scalar(tag: str, scalar_value: Any, new_style: bool = False,
           double_precision: bool = False) -> bytes:
    array = make_np(scalar_value).squeeze()
    if array.ndim != 0:
        # torch's message, line-continuation whitespace included
        raise AssertionError("Tensor should contain one element (0 dimensions)."
                             f"             Was given size: {array.size} and {array.ndim}"
                             " dimensions.")
    number = float(array)
    if not new_style:
        return summary(value(tag, simple_value=number))
    if double_precision:
        tensor = tensor_message(DT_DOUBLE, None, pb.packed_doubles(6, [number]))
    else:
        tensor = tensor_message(DT_FLOAT, None, pb.packed_floats(5, [number]))
    return summary(value(tag, tensor=tensor, metadata=plugin_metadata("scalars")))


# tensors ---------------------------------------------------------------------------------------

def _half_bits(values: np.ndarray) -> bytes:
    # torch stores a half's value as the bits of the same value in float32, read as int32
    ints = [struct.unpack("<i", struct.pack("<f", float(v)))[0] for v in values]
    return pb.packed_varints(13, ints)


# dtype -> (DataType, encoder of the flattened values)
_TENSOR_TYPES: dict[Any, tuple[int, Any]] = {
    _dtype.float16: (DT_HALF, _half_bits),
    _dtype.bfloat16: (DT_BFLOAT16, _half_bits),
    _dtype.float32: (DT_FLOAT, lambda v: pb.packed_floats(5, v.tolist())),
    _dtype.float64: (DT_DOUBLE, lambda v: pb.packed_doubles(6, v.tolist())),
    _dtype.int8: (DT_INT8, lambda v: pb.packed_varints(7, v.tolist())),
    _dtype.int16: (DT_INT16, lambda v: pb.packed_varints(7, v.tolist())),
    _dtype.int32: (DT_INT32, lambda v: pb.packed_varints(7, v.tolist())),
    _dtype.uint8: (DT_UINT8, lambda v: pb.packed_varints(16, v.tolist())),
    _dtype.int64: (DT_INT64, lambda v: pb.packed_varints(10, v.tolist())),
    _dtype.bool: (DT_BOOL, lambda v: pb.packed_varints(11, v.tolist())),
}


def tensor_summary(tag: str, tensor: Tensor) -> bytes:
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if tensor.dtype not in _TENSOR_TYPES:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, encode = _TENSOR_TYPES[tensor.dtype]
    flat = tensor.detach()
    if tensor.dtype == _dtype.bfloat16:
        flat = flat.float()
    values = np.asarray(flat.numpy()).reshape(-1)
    message = tensor_message(dtype, tuple(tensor.shape), encode(values))
    return summary(value(tag, tensor=message, metadata=plugin_metadata("tensor")))


# histograms ------------------------------------------------------------------------------------

def tensorflow_bins() -> list[float]:
    """TensorBoard's default bucket edges: +-1e-12 growing by 10% up to 1e20, and zero."""
    edge, positive = 1e-12, []
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-e for e in reversed(positive)] + [0] + positive


def histogram_message(min: float, max: float, num: float, sum: float, sum_squares: float,
                      bucket_limit: Any, bucket: Any) -> bytes:
    """HistogramProto{min=1, max=2, num=3, sum=4, sum_squares=5, bucket_limit=6, bucket=7}."""
    return (pb.double(1, min) + pb.double(2, max) + pb.double(3, num) + pb.double(4, sum)
            + pb.double(5, sum_squares) + pb.packed_doubles(6, bucket_limit)
            + pb.packed_doubles(7, bucket))


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None) -> bytes:
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    nbins = len(counts)
    if max_bins is not None and nbins > max_bins:
        # merge runs of `group` neighbouring bins (torch pads with nbins % group as remainder)
        group = nbins // max_bins
        remainder = nbins % group
        if remainder != 0:
            counts = np.pad(counts, [[0, group - remainder]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, group).sum(axis=-1)
        merged = np.empty((counts.size + 1,), limits.dtype)
        merged[:-1] = limits[:-1:group]
        merged[-1] = limits[-1]
        limits = merged
    # keep the bins from the first to the last non-empty one; TensorBoard reads only right
    # edges, so one more (empty) bin on the left carries the left edge
    nonempty = np.flatnonzero(counts > 0)
    # (all empty, as when every value is outside the bins: torch's bounds, which end in the
    # error below)
    first = int(nonempty[0]) if nonempty.size else len(counts)
    last = int(nonempty[-1]) + 1 if nonempty.size else 1
    if first > 0:
        counts = counts[first - 1:last]
    else:
        counts = np.concatenate([[0], counts[:last]])
    limits = limits[first:last + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return histogram_message(values.min(), values.max(), len(values), values.sum(),
                             values.dot(values), limits.tolist(), counts.tolist())


def histogram(tag: str, values: Any, bins: Any, max_bins: int | None = None) -> bytes:
    array = make_np(values).astype(float)
    return summary(value(tag, histo=make_histogram(array, bins, max_bins)))


def histogram_raw(tag: str, min: float, max: float, num: float, sum: float,
                  sum_squares: float, bucket_limits: Any, bucket_counts: Any) -> bytes:
    return summary(value(tag, histo=histogram_message(
        min, max, num, sum, sum_squares, list(bucket_limits), list(bucket_counts))))


# images and text -------------------------------------------------------------------------------

def image(tag: str, tensor: Any, dataformats: str = "NCHW") -> bytes:
    array = convert_to_HWC(make_np(tensor), dataformats)
    # uint8 images are taken as 0..255, anything else as 0..1, as torch does
    scale = 1 if array.dtype == np.uint8 else 255
    pixels = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = pixels.shape
    encoded = encode_png(pixels)
    message = (pb.int_field(1, height) + pb.int_field(2, width) + pb.int_field(3, channels)
               + pb.bytes_field(4, encoded))
    return summary(value(tag, image=message))


def text(tag: str, text_string: str) -> bytes:
    # TextPluginData(version=0) encodes to no bytes
    tensor = tensor_message(DT_STRING, (1,), pb.repeated_bytes(8, [text_string.encode("utf_8")]))
    return summary(value(tag + "/text_summary", tensor=tensor, metadata=plugin_metadata("text")))
