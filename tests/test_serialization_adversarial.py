"""retrograd.save / retrograd.load against hostile files, shared memory, deep objects and streams.

Hostile files are built here from valid checkpoints; none is kept in the repository.
"""

import io
import json
import struct
import tracemalloc
import zipfile

import pytest

import retrograd
from retrograd.serialization import load, save

torch = pytest.importorskip("torch")


def _saved(obj):
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _round_trip(obj):
    return load(io.BytesIO(_saved(obj)))


# --- decompression bombs ------------------------------------------------------------------------

def _bomb(method, target, pad):
    """A checkpoint whose `target` entry is compressed with `method` and padded with `pad`
    zero bytes, while its zip headers still declare the entry's true (small) size."""
    src = zipfile.ZipFile(io.BytesIO(_saved({"w": retrograd.zeros(4)})))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == target:
                small = len(data)
                dst.writestr(info.filename, data + b" " * pad, compress_type=method)
            else:
                dst.writestr(info.filename, data)
    raw = bytearray(out.getvalue())
    name = target.encode()
    # declare the small size in the local header (offset 22) and central directory (offset 24)
    for sig, field in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        pos = raw.find(sig)
        while pos >= 0:
            name_at = pos + (30 if field == 22 else 46)
            if raw[name_at:name_at + len(name)] == name:
                struct.pack_into("<L", raw, pos + field, small)
            pos = raw.find(sig, pos + 1)
    return bytes(raw)


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2])
@pytest.mark.parametrize("target", ["retrograd/manifest.json", "retrograd/data/0.npy"])
def test_compressed_entries_are_refused_without_expanding_them(method, target):
    pad = 48 << 20
    raw = _bomb(method, target, pad)
    assert len(raw) < 200_000
    # the archive as built declares the small size, yet expands to the padding
    assert zipfile.ZipFile(io.BytesIO(raw)).getinfo(target).file_size < 4096
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match="compressed or encrypted"):
            load(io.BytesIO(raw))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_entry_is_never_read_past_its_declared_size():
    # a stored entry whose headers disagree on its size
    raw = bytearray(_saved({"w": retrograd.zeros(4)}))
    pos = raw.find(b"PK\x01\x02")
    struct.pack_into("<L", raw, pos + 24, struct.unpack_from("<L", raw, pos + 24)[0] + 100)
    with pytest.raises(RuntimeError, match="two different sizes"):
        load(io.BytesIO(bytes(raw)))


def test_entry_larger_than_the_archive_is_refused_before_allocating():
    raw = bytearray(_saved({"w": retrograd.zeros(4)}))
    name = b"retrograd/data/0.npy"
    for sig, at, field in ((b"PK\x03\x04", 30, 22), (b"PK\x01\x02", 46, 24)):
        pos = raw.find(sig)
        while pos >= 0:
            if raw[pos + at:pos + at + len(name)] == name:
                for off in (field - 4, field):  # compressed and uncompressed sizes
                    struct.pack_into("<L", raw, pos + off, 0xFFFFFFF0)
            pos = raw.find(sig, pos + 1)
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match="past the end of the archive"):
            load(io.BytesIO(bytes(raw)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


# --- shared storage -----------------------------------------------------------------------------

def test_views_share_memory_after_loading():
    a = retrograd.arange(12.).reshape(3, 4)
    views = [a, a[1], a.t(), a[:, 1:3], a.view(-1)[2:9:3]]
    out = _round_trip(views)
    for v, w in zip(views, out):
        assert w.tolist() == v.tolist()
        assert w.stride() == v.stride()
    out[0][1, 2] = 100.0
    assert out[1][2].item() == 100.0
    assert out[2][2, 1].item() == 100.0
    assert out[3][1, 1].item() == 100.0
    out[4][1] = -1.0  # element 5 = a[1, 1]
    assert out[0][1, 1].item() == -1.0


def test_views_share_memory_like_torch():
    def program(lib, ta, tb):
        a = lib.arange(10.)
        ta.save([a, a[2:6], a[::2]], tb)
        tb.seek(0)
        x, y, z = ta.load(tb)
        y.mul_(10)
        z[0] = 7.0
        return x.tolist(), y.tolist(), z.tolist(), y.stride(), z.stride()

    ours = program(retrograd, retrograd, io.BytesIO())
    theirs = program(torch, torch, io.BytesIO())
    assert ours == theirs


def test_tied_weights_stay_tied():
    nn = retrograd.nn

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 3)
            self.out = nn.Linear(3, 5, bias=False)
            self.out.weight = self.emb.weight

    sd = _round_trip(Tied().state_dict())
    assert sd["emb.weight"].data_ptr() == sd["out.weight"].data_ptr()
    sd["emb.weight"].add_(1.0)
    assert sd["out.weight"].tolist() == sd["emb.weight"].tolist()
    m = Tied()
    m.load_state_dict(sd)
    assert m.out.weight.tolist() == sd["emb.weight"].tolist()


def test_parameters_and_tensors_sharing_memory():
    p = retrograd.nn.Parameter(retrograd.randn(4))
    d = p.detach()
    out = _round_trip({"p": p, "d": d, "p2": p})
    assert isinstance(out["p"], retrograd.nn.Parameter) and out["p"] is out["p2"]
    with retrograd.no_grad():
        out["p"].zero_()
    assert out["d"].tolist() == [0.0] * 4


def test_expanded_tensor_saves_its_storage_only():
    t = retrograd.zeros(1).expand(10**6)
    raw = _saved(t)
    assert len(raw) < 2000
    out = load(io.BytesIO(raw))
    assert out.shape == (10**6,) and out.stride() == (0,) and out.sum().item() == 0.0
    with pytest.raises(RuntimeError) as ours:
        out.add_(1)
    buf = io.BytesIO()
    torch.save(torch.zeros(1).expand(10**6), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError) as theirs:
        torch.load(buf).add_(1)
    assert str(ours.value) == str(theirs.value)


def test_storages_of_several_dtypes():
    a = retrograd.arange(4, dtype=retrograd.int32)
    b = a.to(retrograd.bfloat16)
    out = _round_trip([a[1:], b[::2], a, b])
    out[2][1] = 9
    out[3][2] = 0.5
    assert out[0].tolist() == [9, 2, 3]
    assert out[1].dtype is retrograd.bfloat16 and out[1].tolist() == [0.0, 0.5]


def _tensor_node(**fields):
    node = {"$": "tensor", "dtype": "float32", "st": 0, "off": 0, "shape": [4],
            "strides": [4], "requires_grad": False}
    node.update(fields)
    return node


def _edit_nodes(nodes, root):
    raw = _saved(retrograd.zeros(4))
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("manifest.json"):
                doc = json.loads(data)
                doc.update(nodes=nodes, root=root)
                data = json.dumps(doc).encode()
            dst.writestr(info.filename, data)
    return out.getvalue()


@pytest.mark.parametrize("nodes,root", [
    ([_tensor_node(shape=[5])], 0),  # past the storage's end
    ([_tensor_node(off=4)], 0),
    ([_tensor_node(strides=[-4])], 0),  # before its start
    ([_tensor_node(strides=[10**12])], 0),
    ([_tensor_node(shape=[2, 2], strides=[4])], 0),
    ([_tensor_node(off=-4)], 0),
    ([_tensor_node(off="0")], 0),
    ([_tensor_node(st=1)], 0),
    ([_tensor_node(st="0")], 0),
    ([_tensor_node(dtype="float64")], 0),
    ([_tensor_node(dtype="int64", shape=[2], strides=[8], requires_grad=True)], 0),
    ([{"$": "list", "v": [0]}], 0),  # refers to itself
    ([{"$": "list", "v": [1]}, 5], 0),  # to a later node
    ([{"$": "list", "v": [-1]}], 0),
    ([1, 2], 2),
    ([1, 2], "1"),
    ({"0": 1}, 0),
    ([[1, 2]], 0),
])
def test_hostile_manifest_nodes_raise(nodes, root):
    with pytest.raises(RuntimeError, match="is not a valid retrograd checkpoint"):
        load(io.BytesIO(_edit_nodes(nodes, root)))


# --- depth --------------------------------------------------------------------------------------

def _nest(n):
    x = []
    for _ in range(n):
        x = [x]
    return x


@pytest.mark.parametrize("depth", [300, 450, 999])  # 999 lists in a dict: the limit
def test_deep_objects_round_trip(depth):
    obj = {"x": _nest(depth), "t": (retrograd.ones(1),) * 2}
    out = _round_trip(obj)
    x = out["x"]
    for _ in range(depth):
        assert len(x) == 1
        x = x[0]
    assert x == []
    assert out["t"][0] is out["t"][1]


def test_what_torch_saves_deep_retrograd_saves_and_loads():
    buf = io.BytesIO()
    torch.save(_nest(450), buf)
    buf.seek(0)
    assert torch.load(buf) == _nest(450)
    assert _round_trip(_nest(450)) == _nest(450)


def test_too_deep_or_cyclic_objects_are_refused_at_save():
    with pytest.raises(ValueError, match="nested too deeply"):
        save(_nest(1001), io.BytesIO())
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="self-referencing"):
        save(loop, io.BytesIO())


def test_deep_manifest_is_refused_at_load():
    nodes = [{"$": "list", "v": []}] + [{"$": "list", "v": [i]} for i in range(5000)]
    with pytest.raises(RuntimeError, match="nested too deeply"):
        load(io.BytesIO(_edit_nodes(nodes, len(nodes) - 1)))


def test_shared_containers_stay_shared():
    inner = [1, 2]
    out = _round_trip({"a": inner, "b": inner})
    assert out["a"] is out["b"]


# --- streams and OS errors ----------------------------------------------------------------------

def _back_to_back(lib):
    f = io.BytesIO()
    lib.save({"first": lib.arange(3)}, f)
    mid = f.tell()
    lib.save([lib.ones(2), "second"], f)
    f.seek(0)
    first = lib.load(f)["first"].tolist()
    f.seek(mid)
    second = lib.load(f)
    return first, second[0].tolist(), second[1]


def test_checkpoints_back_to_back_in_one_stream():
    assert _back_to_back(retrograd) == _back_to_back(torch) == ([0, 1, 2], [1.0, 1.0], "second")
    # retrograd also leaves the stream just after the checkpoint it read (torch leaves it
    # inside), so consecutive loads read consecutive checkpoints
    f = io.BytesIO()
    save({"first": retrograd.arange(3)}, f)
    mid = f.tell()
    save([retrograd.ones(2), "second"], f)
    f.seek(0)
    assert load(f)["first"].tolist() == [0, 1, 2]
    assert f.tell() == mid
    assert load(f)[1] == "second"
    assert f.tell() == len(f.getvalue())


def test_checkpoints_back_to_back_in_a_file(tmp_path):
    path = tmp_path / "two.ckpt"
    with open(path, "wb") as f:
        save(retrograd.tensor([1.0]), f)
        save(retrograd.tensor([2.0]), f)
    with open(path, "rb") as f:
        assert load(f).tolist() == [1.0]
        assert load(f).tolist() == [2.0]
    assert load(path).tolist() == [1.0]  # a path reads the file's first checkpoint


def test_checkpoint_after_other_bytes():
    buf = io.BytesIO()
    buf.write(b"header bytes PK\x05\x06 that are not a checkpoint")
    start = buf.tell()
    save({"x": retrograd.arange(4)}, buf)
    buf.seek(start)
    assert load(buf)["x"].tolist() == [0, 1, 2, 3]


def test_os_errors_are_raised_as_such(tmp_path):
    for lib in (torch, retrograd):
        with pytest.raises(IsADirectoryError):
            lib.load(tmp_path)
        with pytest.raises(FileNotFoundError):
            lib.load(tmp_path / "missing.pt")


def test_large_stored_checkpoint_is_not_held_twice():
    big = retrograd.zeros(16 << 20, dtype=retrograd.uint8)  # 16 MiB
    src = io.BytesIO(_saved(big))
    tracemalloc.start()
    try:
        out = load(src)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.shape == (16 << 20,)
    assert peak < 20 << 20  # the tensor and a few read buffers, not a second copy
