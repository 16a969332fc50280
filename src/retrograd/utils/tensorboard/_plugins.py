"""Summaries of TensorBoard's custom-scalars layouts, precision-recall curves, audio and meshes,
encoded as torch.utils.tensorboard encodes them."""

from __future__ import annotations

import io
import json
import wave
from typing import Any

import numpy as np

from retrograd._tensor import Tensor

from . import _proto as pb
from ._convert import make_np
from ._summary import DT_FLOAT, DT_STRING, plugin_metadata, summary, tensor_message, value


def _chart(title: str, properties: Any) -> bytes:
    """Chart{title=1, multiline=2 {tag=1 repeated} | margin=3 {series=1 {value, lower, upper}}}."""
    kind, tags = properties[0], properties[1]
    if kind == "Margin":
        if len(tags) != 3:
            raise AssertionError("len(tags) != 3")
        series = pb.string(1, tags[0]) + pb.string(2, tags[1]) + pb.string(3, tags[2])
        content = pb.message(3, pb.message(1, series))
    else:  # anything else is a multi-line chart, as in torch
        content = pb.message(2, b"".join(pb.string(1, t, present=True) for t in tags))
    return pb.string(1, title) + content


def custom_scalars(layout: dict[str, dict[str, Any]]) -> bytes:
    """Layout{category=2 Category{title=1, chart=2}} in a string tensor under the tag
    custom_scalars__config__."""
    categories = b""
    for title, charts in layout.items():
        body = pb.string(1, title) + b"".join(
            pb.message(2, _chart(name, props)) for name, props in charts.items())
        categories += pb.message(2, body)
    tensor = tensor_message(DT_STRING, (), pb.repeated_bytes(8, [categories]))
    return summary(value("custom_scalars__config__", tensor=tensor,
                         metadata=plugin_metadata("custom_scalars")))


def _pr_summary(tag: str, data: np.ndarray, num_thresholds: int) -> bytes:
    # PrCurvePluginData{version=1 (0), num_thresholds=2}; the data are a 6 x N float tensor
    metadata = plugin_metadata("pr_curves", pb.int_field(2, num_thresholds))
    tensor = tensor_message(DT_FLOAT, tuple(data.shape[:2]),
                            pb.packed_floats(5, data.reshape(-1).tolist()))
    return summary(value(tag, tensor=tensor, metadata=metadata))


def compute_curve(labels: np.ndarray, predictions: np.ndarray, num_thresholds: int,
                  weights: Any = None) -> np.ndarray:
    """Rows TP, FP, TN, FN, precision, recall at `num_thresholds` evenly spaced thresholds."""
    minimum_count = 1e-7
    if weights is None:
        weights = 1.0
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)
    edges = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=edges,
                                 weights=positive * weights)
    fp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=edges,
                                 weights=(1.0 - positive) * weights)
    # counts at or above each threshold: cumulative sums from the top
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(minimum_count, tp + fp)
    recall = tp / np.maximum(minimum_count, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_curve(tag: str, labels: np.ndarray, predictions: np.ndarray, num_thresholds: int = 127,
             weights: Any = None) -> bytes:
    num_thresholds = min(num_thresholds, 127)  # TensorBoard's limit
    data = compute_curve(labels, predictions, num_thresholds=num_thresholds, weights=weights)
    return _pr_summary(tag, data, num_thresholds)


def _as_array(x: Any) -> Any:
    return make_np(x) if isinstance(x, Tensor) else x


def pr_curve_raw(tag: str, tp: Any, fp: Any, tn: Any, fn: Any, precision: Any, recall: Any,
                 num_thresholds: int = 127, weights: Any = None) -> bytes:
    if num_thresholds > 127:
        num_thresholds = 127
    data = np.stack([_as_array(x) for x in (tp, fp, tn, fn, precision, recall)])
    return _pr_summary(tag, data, num_thresholds)


def audio(tag: str, tensor: Any, sample_rate: int = 44100) -> bytes:
    """Mono 16-bit WAV of samples in [-1, 1] (clipped beyond, with torch's warning print)."""
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    samples = (array * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(samples.tobytes())
    # Summary.Audio{sample_rate=1 float, num_channels=2, length_frames=3,
    # encoded_audio_string=4, content_type=5}
    message = (pb.float32(1, sample_rate) + pb.int_field(2, 1) + pb.int_field(3, samples.shape[-1])
               + pb.bytes_field(4, buffer.getvalue()) + pb.string(5, "audio/wav"))
    return summary(value(tag, audio=message))


def figure_to_image(figures: Any, close: bool = True) -> np.ndarray:
    """A matplotlib figure (C x H x W) or a list of them (N x C x H x W), rendered by Agg."""
    import matplotlib.backends.backend_agg as agg  # type: ignore[import-not-found,unused-ignore]
    import matplotlib.pyplot as plt  # type: ignore[import-not-found,unused-ignore]

    def render(figure: Any) -> np.ndarray:
        canvas = agg.FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
        width, height = figure.canvas.get_width_height()
        chw = np.moveaxis(rgba.reshape([height, width, 4])[:, :, 0:3], source=2, destination=0)
        if close:
            plt.close(figure)
        return chw

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


# MeshPluginData.ContentType
_VERTEX, _FACE, _COLOR = 1, 2, 3
_CONTENT_NAMES = {_VERTEX: "VERTEX", _FACE: "FACE", _COLOR: "COLOR"}


def mesh(tag: str, vertices: Any, colors: Any, faces: Any, config_dict: Any) -> bytes:
    """One tensor value per part given (vertices, faces, colors: B x N x 3), tagged
    <tag>_VERTEX, <tag>_FACE, <tag>_COLOR, for TensorBoard's mesh plugin."""
    json_config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [(t, kind) for t, kind in ((vertices, _VERTEX), (faces, _FACE), (colors, _COLOR))
             if t is not None]
    components = 0
    for _, kind in parts:
        components |= 1 << kind
    values = []
    for data, kind in parts:
        array = make_np(data) if isinstance(data, Tensor) else np.asarray(data)
        shape = tuple(int(s) for s in array.shape)
        if len(shape) != 3:
            size = "retrograd.Size(" + str(list(shape)) + ")"
            raise ValueError(f"Tensor shape should be of shape BxNx3, but got {size}.")
        # MeshPluginData{version=1 (0), name=2, content_type=3, json_config=5, shape=6,
        # components=7}
        content = (pb.string(2, tag) + pb.int_field(3, kind) + pb.string(5, json_config)
                   + pb.packed_varints(6, shape) + pb.int_field(7, components))
        tensor = tensor_message(DT_FLOAT, shape,
                                pb.packed_floats(5, array.reshape(-1).astype(float).tolist()))
        values.append(value(f"{tag}_{_CONTENT_NAMES[kind]}", tensor=tensor,
                            metadata=plugin_metadata("mesh", content)))
    return summary(*values)
