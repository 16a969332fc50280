"""retrograd.utils.tensorboard.SummaryWriter against torch.utils.tensorboard.SummaryWriter: the
same calls write event files that TensorBoard's own readers load into the same events (tags,
steps, values, histogram buckets, image sizes and pixels, text, hparams), with the same
directories; record framing and CRCs checked by TensorBoard's record reader; purge_step, flush
and close; torch's errors for bad input."""

from __future__ import annotations

import glob
import io
import os
import re
import socket
import struct

import numpy as np
import pytest

import retrograd
from retrograd.utils.tensorboard import SummaryWriter
from retrograd.utils.tensorboard._record import crc32c, frame, masked_crc32c

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")
Image = pytest.importorskip("PIL.Image")

from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)
from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    RawEventFileLoader,
)
from tensorboard.compat.proto import event_pb2  # noqa: E402
from tensorboard.compat.tensorflow_stub import errors  # noqa: E402
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import (  # noqa: E402
    PyRecordReader_New,
)
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchSummaryWriter  # noqa: E402

WALL = 1_700_000_000.25
RNG = np.random.default_rng(0)
IMAGES = {
    "float_chw": (RNG.random((3, 6, 9)), "CHW"),
    "float_hwc": (RNG.random((5, 4, 3)) * 1.4 - 0.2, "HWC"),  # out of [0, 1]: clipped
    "uint8_hw": (RNG.integers(0, 256, (7, 3), dtype=np.uint8), "HW"),
    "gray_chw": (RNG.random((1, 4, 4)), "CHW"),
    "rgba_hwc": (RNG.integers(0, 256, (3, 5, 4), dtype=np.uint8), "HWC"),
    "wh": (RNG.random((6, 2)), "WH"),
}
NORMAL = RNG.normal(size=500)
PRED = RNG.random(200)
BATCHES = {
    "nchw": (RNG.random((10, 3, 4, 5)), "NCHW"),  # 10 images: two rows of the 8-wide grid
    "nhwc_gray": (RNG.random((3, 4, 5, 1)), "NHWC"),
}


def _program(lib, writer) -> None:
    """The same calls, given `lib`'s tensors, to either writer."""
    w = writer
    w.add_scalar("loss", lib.tensor(1.5), 3, walltime=WALL)
    w.add_scalar("loss", lib.tensor([0.75], dtype=lib.float64), 4, walltime=WALL)
    w.add_scalar("loss", np.float32(0.5), 5, walltime=WALL)
    w.add_scalar("int", 7, 0, walltime=WALL)
    w.add_scalar("zero", 0.0, 0, walltime=WALL)
    w.add_scalar("huge", 1e300, 0, walltime=WALL)  # beyond float32: an infinity
    w.add_scalar("neg_step", -1.25, -3, walltime=WALL)
    w.add_scalar("bf16", lib.tensor(0.1, dtype=lib.bfloat16), 1, walltime=WALL)
    w.add_scalar("new", 0.25, 1, walltime=WALL, new_style=True)
    w.add_scalar("new64", 1 / 3, 1, walltime=WALL, new_style=True, double_precision=True)
    w.add_scalar("nostep", 2.0, walltime=WALL)
    # a training loop's values: a loss and parameters that require grad, a gradient
    param = lib.nn.Parameter(lib.tensor(NORMAL[:12].reshape(3, 4)))
    loss = (param * param).sum()
    loss.backward()
    w.add_scalar("train/loss", loss, 10, walltime=WALL)
    w.add_scalar("train/loss_item", loss.item(), 11, walltime=WALL)
    w.add_histogram("train/param", param, 10, walltime=WALL)
    w.add_histogram("train/grad", param.grad, 10, walltime=WALL)
    w.add_scalar("train/step_tensor", 1.0, lib.tensor(12), walltime=WALL)
    values = lib.tensor(np.linspace(-3.0, 4.0, 101))
    w.add_histogram("hist/default", values, 1, walltime=WALL)
    w.add_histogram("hist/ints", np.arange(20), 2, walltime=WALL)
    w.add_histogram("hist/auto", values, 3, bins="auto", walltime=WALL)
    w.add_histogram("hist/fd", NORMAL, 3, bins="fd", walltime=WALL)
    w.add_histogram("hist/max_bins", values, 4, bins=30, walltime=WALL, max_bins=7)
    w.add_histogram("hist/max_bins_even", values, 4, bins=30, walltime=WALL, max_bins=10)
    w.add_histogram("hist/list_bins", np.array([0.5, 1.5, 1.7]), 5, bins=[0, 1, 2, 3],
                    walltime=WALL)
    w.add_histogram("hist/one", 2.5, 6, walltime=WALL)
    w.add_histogram_raw("hist/raw", 0.0, 4.0, 10, 20.0, 50.0, [1.0, 2.0, 4.0], [2, 3, 5], 7,
                        walltime=WALL)
    w.add_text("note", "hello *world*, ünïcode", 2, walltime=WALL)
    w.add_text("note", "", 3, walltime=WALL)
    w.add_tensor("tensor/f32", lib.arange(6, dtype=lib.float32).reshape(2, 3), 1, walltime=WALL)
    w.add_tensor("tensor/i64", lib.tensor([[1, -2], [3, 4]]), 1, walltime=WALL)
    w.add_tensor("tensor/f64", lib.tensor([0.5, 1e-300], dtype=lib.float64), 1, walltime=WALL)
    w.add_tensor("tensor/bool", lib.tensor([True, False]), 1, walltime=WALL)
    w.add_tensor("tensor/u8", lib.tensor([0, 255], dtype=lib.uint8), 1, walltime=WALL)
    w.add_tensor("tensor/f16", lib.tensor([0.5, -2.0], dtype=lib.float16), 1, walltime=WALL)
    for tag, (img, fmt) in IMAGES.items():
        w.add_image("image/" + tag, lib.tensor(img), 1, walltime=WALL, dataformats=fmt)
    w.add_image("image/numpy", IMAGES["float_chw"][0], 2, walltime=WALL)
    for tag, (img, fmt) in BATCHES.items():
        w.add_images("images/" + tag, lib.tensor(img), 1, walltime=WALL, dataformats=fmt)
    w.add_scalars("run/main", {"train": 1.0, "val": lib.tensor(2.0)}, 1, walltime=WALL)
    w.add_scalars("run/main", {"train": 0.5, "test": 3.0}, 2, walltime=WALL)
    labels = (PRED > 0.4).astype(np.int64)
    labels[::7] ^= 1
    w.add_pr_curve("pr", lib.tensor(labels), lib.tensor(PRED), 1, walltime=WALL)
    w.add_pr_curve("pr", labels, PRED, 2, num_thresholds=300, weights=0.5, walltime=WALL)
    w.add_pr_curve("pr/small", labels, PRED, 3, num_thresholds=5, walltime=WALL)
    counts = [lib.tensor([5.0, 3.0, 1.0]), [1.0, 1.0, 0.0], np.array([0.0, 4.0, 5.0]),
              [0.0, 2.0, 4.0], [0.8, 0.75, 1.0], lib.tensor([1.0, 0.6, 0.2])]
    w.add_pr_curve_raw("pr/raw", *counts, 1, num_thresholds=3, walltime=WALL)
    w.add_audio("audio", lib.tensor(np.sin(np.linspace(0, 20, 300)) * 0.9), 1,
                sample_rate=8000, walltime=WALL)
    w.add_audio("audio/clipped", np.linspace(-2, 2, 50)[None], 2, walltime=WALL)
    w.add_custom_scalars({"Losses": {"all": ["Multiline", ["loss", "int"]],
                                     "band": ["Margin", ["loss", "zero", "huge"]]},
                          "Other": {"x": ["Multiline", ["nostep"]]}})
    w.add_custom_scalars_multilinechart(["loss", "new"], category="c", title="t")
    w.add_custom_scalars_marginchart(["a", "b", "c"])
    img, fmt = IMAGES["float_chw"]
    boxes = lib.tensor([[1.0, 1.0, 6.0, 4.0], [0.0, 2.0, 3.0, 5.0]])
    w.add_image_with_boxes("boxes", lib.tensor(img), boxes, 1, walltime=WALL)
    w.add_image_with_boxes("boxes/labels", lib.tensor(np.ones((3, 30, 40))),
                           lib.tensor([[2, 3, 30, 25], [10, 10, 20, 28]]), 1, walltime=WALL,
                           labels=["cat", "dog"])
    w.add_image_with_boxes("boxes/one_label", IMAGES["rgba_hwc"][0], lib.tensor([[0, 0, 3, 2]]),
                           2, walltime=WALL, dataformats="HWC", labels="x", rescale=2)
    w.add_image_with_boxes("boxes/wrong_count", img, lib.tensor([[0, 0, 3, 2]]), 2,
                           walltime=WALL, labels=["a", "b"])
    verts = lib.tensor([[[1, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]], dtype=lib.float32)
    cols = lib.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]], dtype=lib.int32)
    faces = lib.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]], dtype=lib.int32)
    w.add_mesh("mesh", verts, colors=cols, faces=faces, global_step=1, walltime=WALL,
               config_dict={"camera": {"cls": "PerspectiveCamera", "fov": 75}})
    w.add_mesh("points", verts * 2, global_step=2, walltime=WALL)
    w.add_hparams({"lr": 0.1, "layers": 3, "opt": "adam", "flag": True, "skip": None,
                   "t": lib.tensor([0.5])},
                  {"hp/acc": 0.9, "hp/loss": lib.tensor(0.1)},
                  hparam_domain_discrete={"opt": ["adam", "sgd"], "layers": [2, 3]},
                  run_name="hp", global_step=4)


def _events(logdir) -> dict[str, list[event_pb2.Event]]:
    """Every event file under `logdir` by directory, read by TensorBoard's own loader."""
    out: dict[str, list[event_pb2.Event]] = {}
    for path in sorted(glob.glob(os.path.join(str(logdir), "**", "events.out.tfevents.*"),
                                 recursive=True)):
        rel = os.path.relpath(os.path.dirname(path), str(logdir))
        assert rel not in out, "one file per directory"
        out[rel] = [event_pb2.Event.FromString(r) for r in RawEventFileLoader(path).Load()]
    return out


def _png_pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)))


@pytest.fixture
def both(tmp_path):
    """Run the program on both writers; their events by directory."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    with SummaryWriter(ours) as w:
        _program(retrograd, w)
    with TorchSummaryWriter(theirs) as w:
        _program(torch, w)
    return _events(ours), _events(theirs)


def test_same_directories_and_events_as_torch(both):
    ours, theirs = both
    assert sorted(ours) == sorted(theirs) == [".", "hp", "run_main_test", "run_main_train",
                                              "run_main_val"]
    images = hparams = 0
    for rel in theirs:
        assert len(ours[rel]) == len(theirs[rel]), rel
        for a, b in zip(ours[rel], theirs[rel]):
            if b.HasField("file_version"):
                # the first event of each file: what wrote it differs, nothing else
                assert a.file_version == b.file_version == "brain.Event:2"
                assert a.source_metadata.writer == "retrograd.utils.tensorboard"
                continue
            if b.wall_time != WALL:  # add_hparams takes no walltime: the time of the call
                assert a.wall_time != WALL and abs(a.wall_time - b.wall_time) < 3600
                a.wall_time = b.wall_time
            for va, vb in zip(a.summary.value, b.summary.value):
                if vb.HasField("image"):
                    # sizes equal and the PNGs decode to the same pixels (the compressed bytes
                    # may differ)
                    pa = _png_pixels(va.image.encoded_image_string)
                    pb_ = _png_pixels(vb.image.encoded_image_string)
                    assert pa.dtype == pb_.dtype == np.uint8 and pa.shape == pb_.shape
                    np.testing.assert_array_equal(pa, pb_)
                    va.image.encoded_image_string = vb.image.encoded_image_string = b""
                    images += 1
                if vb.metadata.plugin_data.plugin_name == "hparams":
                    # the session start's map of hyperparameters is written in protobuf's hash
                    # order: compare the decoded plugin data
                    ca, cb = (HParamsPluginData.FromString(v.metadata.plugin_data.content)
                              for v in (va, vb))
                    assert ca == cb
                    va.metadata.plugin_data.content = vb.metadata.plugin_data.content = b""
                    hparams += 1
            assert a == b, (rel, a, b)
            # the same bytes, too (protobuf's field order), apart from the PNGs
            assert a.SerializeToString() == b.SerializeToString()
    assert images == len(IMAGES) + 1 + len(BATCHES) + 4
    assert hparams == 3


def test_tensorboard_reads_what_it_should(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss", retrograd.tensor(1.0 / (step + 1)), step)
        w.add_histogram("w", retrograd.arange(10, dtype=retrograd.float32), 2)
        w.add_image("img", np.full((3, 2, 4), 0.5), 1)
        w.add_text("cfg", "lr=0.1", 0)
    acc = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    acc.Reload()
    scalars = acc.Scalars("loss")
    assert [s.step for s in scalars] == list(range(5))
    np.testing.assert_allclose([s.value for s in scalars], [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5],
                               rtol=1e-7)
    (hist,) = acc.Histograms("w")
    assert hist.step == 2
    assert (hist.histogram_value.min, hist.histogram_value.max) == (0.0, 9.0)
    assert hist.histogram_value.num == 10 and hist.histogram_value.sum == 45.0
    assert sum(hist.histogram_value.bucket) == 10
    (img,) = acc.Images("img")
    assert (img.width, img.height) == (4, 2)
    np.testing.assert_array_equal(_png_pixels(img.encoded_image_string),
                                  np.full((2, 4, 3), 127, np.uint8))
    (text,) = acc.Tensors("cfg/text_summary")
    assert text.tensor_proto.string_val == [b"lr=0.1"]


def test_crc32c_and_record_framing():
    # the check value of CRC-32C (RFC 3720's iSCSI polynomial)
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import (
        masked_crc32c as tb_masked,
    )
    for data in (b"", b"a", bytes(range(256)) * 3):
        assert masked_crc32c(data) == tb_masked(data)
    record = frame(b"payload")
    assert record[:8] == struct.pack("<Q", 7) and record[12:19] == b"payload"
    assert len(record) == 8 + 4 + 7 + 4


def _read_records(path) -> list[bytes]:
    reader = PyRecordReader_New(str(path))
    out = []
    while True:
        try:
            reader.GetNext()
        except errors.OutOfRangeError:
            return out
        out.append(reader.record())


@pytest.mark.parametrize("where,message", [("length", "header crc32"),
                                           ("data", "event crc32")])
def test_corrupted_byte_is_rejected(tmp_path, where, message):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("x", 1.0, 1)
    (path,) = glob.glob(str(tmp_path / "events.*"))
    data = bytearray(open(path, "rb").read())
    first = struct.unpack("<Q", data[:8])[0]
    assert len(_read_records(path)) == 2
    # flip a byte of the second record's length, or of its data
    at = 8 + 4 + first + 4 + (2 if where == "length" else 12 + 3)
    data[at] ^= 0x40
    open(path, "wb").write(bytes(data))
    with pytest.raises(errors.DataLossError, match=message):
        _read_records(path)


def test_file_names_and_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1", filename_suffix=".v2")
    logdir = w.get_logdir()
    w.close()
    host = socket.gethostname()
    assert re.fullmatch(r"runs/[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_" + re.escape(host) + "_lr0.1",
                        logdir)
    (name,) = os.listdir(logdir)
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\." + re.escape(host) + r"\."
                        + str(os.getpid()) + r"\.\d+\.v2", name)
    # a path object is accepted and returned as given, as torch's
    p = tmp_path / "as_path"
    with SummaryWriter(p) as w:
        assert w.get_logdir() == p
    assert len(os.listdir(p)) == 1


def _purge_run(W, logdir):
    with W(logdir) as w:
        for step in range(10):
            w.add_scalar("loss", float(step), step)
    with W(logdir, purge_step=5) as w:
        for step in range(5, 8):
            w.add_scalar("loss", 100.0 + step, step)
    acc = EventAccumulator(str(logdir))
    acc.Reload()
    return [(s.step, s.value) for s in acc.Scalars("loss")]


def test_purge_step_hides_later_steps_of_the_previous_run(tmp_path):
    ours = _purge_run(SummaryWriter, tmp_path / "ours")
    assert ours == _purge_run(TorchSummaryWriter, tmp_path / "theirs")
    assert ours == [(s, float(s)) for s in range(5)] + [(s, 100.0 + s) for s in range(5, 8)]
    # the purge events: a file_version and a session START at the purge step
    files = sorted(glob.glob(str(tmp_path / "ours" / "events.*")), key=os.path.getmtime)
    events = [event_pb2.Event.FromString(r) for r in RawEventFileLoader(files[-1]).Load()]
    assert [(e.step, e.file_version) for e in events[:2]] == [(0, "brain.Event:2"),
                                                              (5, "brain.Event:2")]
    assert events[2].step == 5 and events[2].session_log.status == event_pb2.SessionLog.START


def _record_count(logdir) -> int:
    return sum(len(_read_records(p)) for p in glob.glob(str(logdir / "events.*")))


def test_flush_close_and_queue(tmp_path):
    w = SummaryWriter(tmp_path / "a", max_queue=100)
    assert _record_count(tmp_path / "a") == 1  # the file_version event, written at once
    w.add_scalar("x", 1.0, 1)
    w.add_scalar("x", 2.0, 2)
    w.flush()
    assert _record_count(tmp_path / "a") == 3
    w.add_scalar("x", 3.0, 3)
    w.close()
    assert _record_count(tmp_path / "a") == 4
    w.close()  # closing twice does nothing, as torch's
    w.flush()
    # adding after close opens a new file, as torch's
    w.add_scalar("x", 4.0, 4)
    w.close()
    assert len(glob.glob(str(tmp_path / "a" / "events.*"))) == 2
    assert _record_count(tmp_path / "a") == 6
    # a full queue is written without flush()
    w = SummaryWriter(tmp_path / "b", max_queue=2)
    w.add_scalar("x", 1.0, 1)
    w.add_scalar("x", 2.0, 2)
    assert _record_count(tmp_path / "b") == 3
    w.close()
    # the context manager closes
    with SummaryWriter(tmp_path / "c") as w:
        w.add_scalars("m", {"a": 1.0}, 1)
        assert w.all_writers is not None
    assert w.all_writers is None
    assert _record_count(tmp_path / "c" / "m_a") == 2


def _raised(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("call", [
    lambda lib, w: w.add_scalar("x", lib.tensor([1.0, 2.0])),
    lambda lib, w: w.add_scalar("x", [1.0]),
    lambda lib, w: w.add_scalar("x", "abc"),
    lambda lib, w: w.add_image("x", lib.rand(3, 4, 5), dataformats="HWCC"),
    lambda lib, w: w.add_image("x", lib.rand(3, 4, 5), dataformats="HW"),
    lambda lib, w: w.add_images("x", lib.rand(2, 2, 4, 5)),
    lambda lib, w: w.add_image("x", lib.rand(4, 5, 5), dataformats="HWC"),
    lambda lib, w: w.add_histogram("x", lib.tensor([])),
    lambda lib, w: w.add_histogram("x", np.array([1e30])),
    lambda lib, w: w.add_histogram_raw("x", 0, 1, 1, 1, 1, [1.0], [1, 2]),
    lambda lib, w: w.add_hparams([("lr", 0.1)], {}),
    lambda lib, w: w.add_hparams({"lr": [0.1]}, {}),
    lambda lib, w: w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": [1]}),
    lambda lib, w: w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete=[1]),
    lambda lib, w: w.add_tensor("x", lib.zeros(2, dtype=lib.float8_e4m3fn)),
    lambda lib, w: w.add_audio("x", lib.zeros(2, 3)),
    lambda lib, w: w.add_custom_scalars_marginchart(["a", "b"]),
    lambda lib, w: w.add_custom_scalars({"c": {"m": ["Margin", ["a"]]}}),
    lambda lib, w: w.add_mesh("m", lib.zeros(4, 3)),
], ids=["multi_element_scalar", "list_scalar", "string_scalar", "repeated_format",
        "format_rank", "two_channel_batch", "five_channel_image", "empty_histogram",
        "histogram_out_of_bins", "raw_histogram_lengths", "hparams_not_dict",
        "hparam_value", "domain_type", "domain_not_dict", "tensor_dtype", "audio_2d",
        "margin_chart_tags", "margin_layout_tags", "mesh_shape"])
def test_errors_match_torch(tmp_path, call):
    with SummaryWriter(tmp_path / "ours") as w:
        ours = _raised(lambda: call(retrograd, w))
    with TorchSummaryWriter(tmp_path / "theirs") as w:
        theirs = _raised(lambda: call(torch, w))
    # dtype and Size names differ by module name only
    message = re.sub(r"torch\.(float|Size)", r"retrograd.\1", theirs[1])
    assert ours == (theirs[0], message)


def test_graphs_and_videos_say_they_are_not_supported(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(NotImplementedError, match="add_graph is not supported"):
            w.add_graph(retrograd.nn.Linear(2, 2), retrograd.zeros(1, 2))
        with pytest.raises(NotImplementedError, match="add_onnx_graph is not supported"):
            w.add_onnx_graph("model.onnx")
        with pytest.raises(NotImplementedError, match="add_video is not supported"):
            w.add_video("v", retrograd.zeros(1, 2, 3, 4, 4))


def test_logs_without_the_tensorboard_package(tmp_path):
    # writing needs no tensorboard (nor protobuf, nor PIL): only reading them back does
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for name in ('tensorboard', 'google.protobuf', 'PIL'):\n"
        "    sys.modules[name] = None\n"
        "import numpy as np\n"
        "from retrograd.utils.tensorboard import SummaryWriter\n"
        f"with SummaryWriter({str(tmp_path)!r}) as w:\n"
        "    w.add_scalar('x', 1.0, 1)\n"
        "    w.add_image('i', np.zeros((3, 2, 2)), 1)\n"
        "    w.add_hparams({'lr': 0.1}, {'acc': 1.0}, run_name='r')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    events = _events(tmp_path)
    assert sorted(events) == [".", "r"]
    assert events["."][1].summary.value[0].simple_value == 1.0


def test_figures_as_torch(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def figure(n):
        fig = plt.figure(figsize=(2, 1.5), dpi=40)
        plt.plot(np.arange(n), np.arange(n) ** 2)
        return fig

    for W, name in ((SummaryWriter, "ours"), (TorchSummaryWriter, "theirs")):
        with W(tmp_path / name) as w:
            w.add_figure("fig", figure(5), 1, walltime=WALL)
            w.add_figure("figs", [figure(3), figure(4)], 2, walltime=WALL, close=False)
    ours, theirs = _events(tmp_path / "ours")["."], _events(tmp_path / "theirs")["."]
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours[1:], theirs[1:]):
        va, vb = a.summary.value[0], b.summary.value[0]
        assert (va.tag, va.image.width, va.image.height) == (vb.tag, vb.image.width,
                                                            vb.image.height)
        np.testing.assert_array_equal(_png_pixels(va.image.encoded_image_string),
                                      _png_pixels(vb.image.encoded_image_string))
    plt.close("all")


def test_pending_events_are_written_after_flush_secs(tmp_path):
    import time

    w = SummaryWriter(tmp_path, max_queue=100, flush_secs=0.2)
    w.add_scalar("x", 1.0, 1)
    deadline = time.monotonic() + 30  # generous: the machine may be busy
    while _record_count(tmp_path) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _record_count(tmp_path) == 2
    w.close()


def test_events_of_a_writer_never_closed_are_written_at_exit(tmp_path):
    import subprocess
    import sys

    code = ("from retrograd.utils.tensorboard import SummaryWriter\n"
            f"w = SummaryWriter({str(tmp_path)!r})\n"
            "w.add_scalar('x', 1.0, 1)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert _record_count(tmp_path) == 2


def _embedding_run(lib, W, logdir):
    rng = np.random.default_rng(1)
    mat, imgs = rng.normal(size=(6, 4)).astype(np.float32), rng.random((6, 3, 5, 5))
    with W(logdir) as w:
        w.add_embedding(lib.tensor(mat), metadata=list("abcdef"), label_img=lib.tensor(imgs))
        w.add_embedding(lib.tensor(mat[:3]), metadata=[[1, "x"], [2, "y"], [3, "z"]],
                        metadata_header=["n", "s"], global_step=7, tag="feat/üñi%\"q\"")
        w.add_embedding(mat[:2].astype(np.float64), global_step=7, tag="plain")
        # the same directory again: torch's warning, files rewritten
        w.add_embedding(lib.tensor(mat[:2]), global_step=7, tag="plain")


def test_embeddings_as_torch(tmp_path, capsys):
    _embedding_run(retrograd, SummaryWriter, tmp_path / "ours")
    ours_out = capsys.readouterr().out
    _embedding_run(torch, TorchSummaryWriter, tmp_path / "theirs")
    assert ours_out == capsys.readouterr().out != ""

    def files(root):
        return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                      if p.is_file() and not p.name.startswith("events."))

    names = files(tmp_path / "theirs")
    assert files(tmp_path / "ours") == names
    assert "projector_config.pbtxt" in names and "00000/default/sprite.png" in names
    for name in names:
        a = (tmp_path / "ours" / name).read_bytes()
        b = (tmp_path / "theirs" / name).read_bytes()
        if name.endswith(".png"):
            np.testing.assert_array_equal(_png_pixels(a), _png_pixels(b))
        else:
            assert a == b, name


@pytest.mark.parametrize("call", [
    lambda lib, w: w.add_embedding(lib.zeros(3, 2), metadata=["a"]),
    lambda lib, w: w.add_embedding(lib.zeros(3, 2), label_img=lib.zeros(2, 3, 4, 4)),
    lambda lib, w: w.add_embedding(lib.zeros(3), tag="vector"),
    lambda lib, w: w.add_embedding(lib.zeros(1, 2), metadata=[[1, 2]], metadata_header=["a"]),
], ids=["labels", "images", "not_2d", "header"])
def test_embedding_errors_match_torch(tmp_path, call):
    with SummaryWriter(tmp_path / "ours") as w:
        ours = _raised(lambda: call(retrograd, w))
    with TorchSummaryWriter(tmp_path / "theirs") as w:
        theirs = _raised(lambda: call(torch, w))
    assert ours == theirs


def test_projector_config_strings_are_protobuf_text_format():
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

    from retrograd.utils.tensorboard._embedding import _quoted

    for text in ("plain", 'q"u\'o\\te', "tab\tnew\nline\rcr\x01\x7f", "ünï/%"):
        assert (text_format.MessageToString(EmbeddingInfo(tensor_name=text))
                == f"tensor_name: {_quoted(text)}\n")
