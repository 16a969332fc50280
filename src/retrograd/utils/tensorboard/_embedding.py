"""Files of TensorBoard's embedding projector: tensors.tsv, metadata.tsv, sprite.png and the
projector_config.pbtxt that lists them, laid out as torch's writer lays them out."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._convert import make_grid, make_np
from ._png import encode_png


def encode_tag(tag: str) -> str:
    """A tag as one directory name: %, / and \\ percent-encoded."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def write_tsv(metadata: list[Any], save_path: str, metadata_header: list[Any] | None) -> None:
    if not metadata_header:
        lines = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError(
                "len of header must be equal to the number of columns in metadata")
        lines = ["\t".join(str(e) for e in row) for row in [metadata_header, *metadata]]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode("utf-8"))


def write_sprite(label_img: Any, save_path: str) -> None:
    """The images tiled into one square PNG, as many a row as the square root of their count;
    values taken in [0, 1]."""
    images = make_np(label_img)
    per_row = math.ceil(images.shape[0] ** 0.5)
    grid = make_grid(images, ncols=per_row)
    square = np.zeros((grid.shape[2], grid.shape[2], 3))
    hwc = grid.transpose(1, 2, 0)
    square[:hwc.shape[0], :, :] = hwc
    pixels = (square * 255).clip(0, 255).astype(np.uint8)
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(encode_png(pixels))


def write_matrix(mat: np.ndarray, save_path: str) -> None:
    with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
        for row in mat:
            f.write(("\t".join(str(x.item()) for x in row) + "\n").encode("utf-8"))


def _quoted(text: str) -> str:
    """A string in protobuf's text format: C escapes; control bytes in octal, UTF-8 kept."""
    special = {10: b"\\n", 13: b"\\r", 9: b"\\t", 34: b'\\"', 39: b"\\'", 92: b"\\\\"}
    out = bytearray()
    for byte in text.encode("utf-8"):
        if byte in special:
            out += special[byte]
        elif byte < 32 or byte == 127:
            out += f"\\{byte:03o}".encode()
        else:
            out.append(byte)
    return '"' + out.decode("utf-8") + '"'


@dataclass
class EmbeddingInfo:
    tensor_name: str
    tensor_path: str
    metadata_path: str | None = None
    sprite_path: str | None = None
    sprite_dims: list[int] = field(default_factory=list)

    def to_text(self) -> str:
        """projector_config.proto's EmbeddingInfo in text format, fields in number order."""
        lines = [f"  tensor_name: {_quoted(self.tensor_name)}"]
        if self.metadata_path is not None:
            lines.append(f"  metadata_path: {_quoted(self.metadata_path)}")
        if self.sprite_path is not None:
            lines.append("  sprite {")
            lines.append(f"    image_path: {_quoted(self.sprite_path)}")
            lines.extend(f"    single_image_dim: {d}" for d in self.sprite_dims)
            lines.append("  }")
        lines.append(f"  tensor_path: {_quoted(self.tensor_path)}")
        return "embeddings {\n" + "\n".join(lines) + "\n}\n"


def write_config(logdir: str, embeddings: list[EmbeddingInfo]) -> None:
    with open(os.path.join(logdir, "projector_config.pbtxt"), "wb") as f:
        f.write("".join(e.to_text() for e in embeddings).encode("utf-8"))
