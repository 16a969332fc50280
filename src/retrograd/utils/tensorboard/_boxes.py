"""Images with bounding boxes: the boxes (and their labels) are drawn by Pillow, as torch's
writer draws them, so this one summary needs Pillow installed."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _proto as pb
from ._convert import convert_to_HWC, make_np
from ._png import encode_png
from ._summary import summary, value


def _draw_box(image: Any, box: np.ndarray, label: str | None) -> None:
    from PIL import ImageDraw, ImageFont

    left, top, right, bottom = box[0], box[1], box[2], box[3]
    draw = ImageDraw.Draw(image)
    draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)],
              width=2, fill="Red")
    if label:
        # the label on a red band along the box's bottom edge
        font = ImageFont.load_default()
        x0, y0, x1, y1 = font.getbbox(label)
        width, height = x1 - x0, y1 - y0
        margin = np.ceil(0.05 * height)
        draw.rectangle([(left, bottom - height - 2 * margin), (left + width, bottom)],
                       fill="Red")
        draw.text((left + margin, bottom - height - margin), label, fill="black", font=font)


def image_boxes(tag: str, tensor_image: Any, tensor_boxes: Any, rescale: float = 1,
                dataformats: str = "CHW", labels: list[str] | None = None) -> bytes:
    from PIL import Image

    array = convert_to_HWC(make_np(tensor_image), dataformats)
    boxes = make_np(tensor_boxes)
    scale = 1 if array.dtype == np.uint8 else 255
    pixels = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = pixels.shape
    image = Image.fromarray(pixels)
    for i in range(boxes.shape[0]):
        _draw_box(image, boxes[i], None if labels is None else labels[i])
    size = (int(width * rescale), int(height * rescale))
    image = image.resize(size, Image.Resampling.LANCZOS)
    # the message keeps the size before rescaling, as torch's
    message = (pb.int_field(1, height) + pb.int_field(2, width) + pb.int_field(3, channels)
               + pb.bytes_field(4, encode_png(np.asarray(image))))
    return summary(value(tag, image=message))
