"""SummaryWriter: torch.utils.tensorboard's writer, writing TensorBoard event files itself."""

from __future__ import annotations

import os
import time
from typing import Any

from . import _boxes, _embedding, _plugins, _summary
from ._convert import make_np
from ._event_file import EventFileWriter, encode_event
from ._hparams import hparams

__all__ = ["SummaryWriter"]


class SummaryWriter:
    """Writes scalars, histograms, images, text, hyperparameters, precision-recall curves,
    audio, meshes and embeddings to event files (and projector files) in `log_dir` that
    TensorBoard reads, with no tensorboard package needed to write them. Same arguments and
    defaults as torch's: `log_dir` defaults to
    runs/<month><day>_<hour>-<minute>-<second>_<hostname><comment>; `purge_step` makes
    TensorBoard hide the events of earlier runs at that step and later; events are written
    when `max_queue` of them are waiting, every `flush_secs` seconds, on flush() and close().
    """

    def __init__(self, log_dir: str | os.PathLike[str] | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        if not log_dir:
            import socket
            from datetime import datetime

            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        # the writer of log_dir, and of each add_scalars sub-directory; made again after close()
        self.file_writer: EventFileWriter | None = None
        self.all_writers: dict[str, EventFileWriter] | None = None
        self._get_file_writer()
        self.default_bins = _summary.tensorflow_bins()
        self._embeddings: list[_embedding.EmbeddingInfo] = []

    def _get_file_writer(self) -> EventFileWriter:
        if self.all_writers is None or self.file_writer is None:
            writer = EventFileWriter(str(self.log_dir), self.max_queue, self.flush_secs,
                                     self.filename_suffix)
            self.file_writer = writer
            self.all_writers = {writer.get_logdir(): writer}
            if self.purge_step is not None:
                # a new file_version and a session START at purge_step: TensorBoard drops the
                # events at and after this step written before
                step = int(self.purge_step)
                writer.add_event(encode_event(time.time(), step, file_version="brain.Event:2"))
                writer.add_event(encode_event(time.time(), step, session_log_start=True))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str | os.PathLike[str]:
        """The directory where event files are written."""
        return self.log_dir

    def add_hparams(self, hparam_dict: dict[str, Any], metric_dict: dict[str, Any],
                    hparam_domain_discrete: dict[str, list[Any]] | None = None,
                    run_name: str | None = None, global_step: int | None = None) -> None:
        """Hyperparameters and metrics for TensorBoard's HPARAMS tab, in the sub-directory
        `run_name` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        experiment, start, end = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as run:
            fw = run._get_file_writer()
            for summary in (experiment, start, end):
                fw.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One number (a Python number, a one-element array or tensor)."""
        summary = _summary.scalar(tag, scalar_value, new_style=new_style,
                                  double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any],
                    global_step: int | None = None, walltime: float | None = None) -> None:
        """Several numbers on one chart: each goes to the sub-directory
        <log_dir>/<main_tag with / as _>_<tag>, under the tag `main_tag`."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, scalar_value in tag_scalar_dict.items():
            sub = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(sub)
            if writer is None:
                writer = EventFileWriter(sub, self.max_queue, self.flush_secs,
                                         self.filename_suffix)
                self.all_writers[sub] = writer
            writer.add_summary(_summary.scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag: str, tensor: Any, global_step: int | None = None,
                   walltime: float | None = None) -> None:
        """A whole tensor (TensorBoard's tensor plugin)."""
        summary = _summary.tensor_summary(tag, tensor)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: int | None = None,
                      bins: Any = "tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        """A histogram of `values`; `bins` as numpy.histogram's, or "tensorflow" for
        TensorBoard's default buckets."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        summary = _summary.histogram(tag, values, bins, max_bins=max_bins)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: int, sum: float,
                          sum_squares: float, bucket_limits: Any, bucket_counts: Any,
                          global_step: int | None = None,
                          walltime: float | None = None) -> None:
        """A histogram already counted: right bucket edges and counts."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = _summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                         bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: int | None = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        """An image (PNG); float values are taken in [0, 1], uint8 in [0, 255]."""
        summary = _summary.image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: int | None = None,
                   walltime: float | None = None, dataformats: str = "NCHW") -> None:
        """A batch of images, tiled eight a row into one image."""
        summary = _summary.image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """Text (markdown) for TensorBoard's TEXT tab, under the tag <tag>/text_summary."""
        summary = _summary.text(tag, text_string)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image_with_boxes(self, tag: str, img_tensor: Any, box_tensor: Any,
                             global_step: int | None = None, walltime: float | None = None,
                             rescale: float = 1, dataformats: str = "CHW",
                             labels: list[str] | str | None = None) -> None:
        """An image with boxes (rows x1, y1, x2, y2) drawn on it, and their labels; drawn
        by Pillow, which this method needs (as torch's)."""
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None  # as torch: mismatched labels are dropped
        summary = _boxes.image_boxes(tag, img_tensor, box_tensor, rescale=rescale,
                                     dataformats=dataformats, labels=labels)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: int | None = None,
                   close: bool = True, walltime: float | None = None) -> None:
        """A matplotlib figure (or a list of them) rendered to an image; needs matplotlib."""
        if isinstance(figure, list):
            self.add_image(tag, _plugins.figure_to_image(figure, close), global_step, walltime,
                           dataformats="NCHW")
        else:
            self.add_image(tag, _plugins.figure_to_image(figure, close), global_step, walltime,
                           dataformats="CHW")

    def add_audio(self, tag: str, snd_tensor: Any, global_step: int | None = None,
                  sample_rate: int = 44100, walltime: float | None = None) -> None:
        """Mono audio, samples in [-1, 1], as 16-bit WAV."""
        summary = _plugins.audio(tag, snd_tensor, sample_rate=sample_rate)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_pr_curve(self, tag: str, labels: Any, predictions: Any,
                     global_step: int | None = None, num_thresholds: int = 127,
                     weights: Any = None, walltime: float | None = None) -> None:
        """A precision-recall curve of binary `labels` against `predictions` in [0, 1]."""
        labels, predictions = make_np(labels), make_np(predictions)
        summary = _plugins.pr_curve(tag, labels, predictions, num_thresholds, weights)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_pr_curve_raw(self, tag: str, true_positive_counts: Any, false_positive_counts: Any,
                         true_negative_counts: Any, false_negative_counts: Any, precision: Any,
                         recall: Any, global_step: int | None = None, num_thresholds: int = 127,
                         weights: Any = None, walltime: float | None = None) -> None:
        """A precision-recall curve already counted."""
        summary = _plugins.pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                                        true_negative_counts, false_negative_counts, precision,
                                        recall, num_thresholds, weights)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags: list[str], category: str = "default",
                                          title: str = "untitled") -> None:
        self._get_file_writer().add_summary(
            _plugins.custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags: list[str], category: str = "default",
                                       title: str = "untitled") -> None:
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._get_file_writer().add_summary(
            _plugins.custom_scalars({category: {title: ["Margin", tags]}}))

    def add_custom_scalars(self, layout: dict[str, dict[str, Any]]) -> None:
        """Charts of the CUSTOM SCALARS tab: {category: {chart: ["Multiline" or "Margin",
        tags]}}."""
        self._get_file_writer().add_summary(_plugins.custom_scalars(layout))

    def add_embedding(self, mat: Any, metadata: list[Any] | None = None,
                      label_img: Any = None, global_step: int | None = None,
                      tag: str = "default", metadata_header: list[Any] | None = None) -> None:
        """Points for the PROJECTOR tab: rows of `mat` (N x D), with optional labels
        (`metadata`, one per row, or rows of columns named by `metadata_header`) and images
        (`label_img`, N x C x H x W), in <log_dir>/<global_step, 5 digits>/<tag>/."""
        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{_embedding.encode_tag(tag)}"
        logdir = self._get_file_writer().get_logdir()
        save_path = os.path.join(logdir, subdir)
        if os.path.exists(save_path):
            if os.path.isdir(save_path):
                print("warning: Embedding dir exists, did you set global_step for "
                      "add_embedding()?")
            else:
                raise NotADirectoryError(
                    f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
        else:
            os.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            _embedding.write_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _embedding.write_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError(
                "mat should be 2D, where mat.size(0) is the number of data points")
        _embedding.write_matrix(mat, save_path)
        info = _embedding.EmbeddingInfo(
            tensor_name=f"{tag}:{str(global_step).zfill(5)}",
            tensor_path=os.path.join(subdir, "tensors.tsv"))
        if metadata is not None:
            info.metadata_path = os.path.join(subdir, "metadata.tsv")
        if label_img is not None:
            info.sprite_path = os.path.join(subdir, "sprite.png")
            info.sprite_dims = [int(label_img.shape[3]), int(label_img.shape[2])]
        # every embedding of this writer is listed again in the rewritten config
        self._embeddings.append(info)
        _embedding.write_config(logdir, self._embeddings)

    def add_video(self, tag: str, vid_tensor: Any, global_step: int | None = None,
                  fps: float = 4, walltime: float | None = None) -> None:
        raise NotImplementedError(
            "SummaryWriter.add_video is not supported: retrograd does not encode videos "
            "(torch needs moviepy for it); log frames with add_images instead")

    def add_mesh(self, tag: str, vertices: Any, colors: Any = None, faces: Any = None,
                 config_dict: Any = None, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """A mesh or point cloud (B x N x 3 vertices, colors, faces) for the MESH tab."""
        summary = _plugins.mesh(tag, vertices, colors, faces, config_dict)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_onnx_graph(self, prototxt: Any) -> None:
        raise NotImplementedError(
            "SummaryWriter.add_onnx_graph is not supported: retrograd reads no ONNX graphs")

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        raise NotImplementedError(
            "SummaryWriter.add_graph is not supported: retrograd does not trace models into "
            "TensorBoard's graph format (torch traces them with torch.jit)")

    def flush(self) -> None:
        """Write every pending event to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Write pending events and close the files; adding more afterwards opens new files."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
