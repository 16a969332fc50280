"""retrograd.save / retrograd.load: round trips, and damaged or hostile files."""

import io
import json
import math
import pickle
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest

import retrograd
from retrograd.serialization import load, save

DTYPES = ["float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int8",
          "int16", "int32", "int64", "uint8", "bool"]


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    save(obj, buf)
    return load(io.BytesIO(buf.getvalue()), **load_kwargs)


def _same(a, b):
    assert type(a) is type(b)
    assert a.dtype is b.dtype
    assert a.shape == b.shape
    assert a.requires_grad == b.requires_grad
    assert a._data.tobytes() == b._data.tobytes()  # bit for bit, NaNs included


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_round_trip_bit_exact(dtype):
    d = getattr(retrograd, dtype)
    base = retrograd.tensor([[0.0, -1.5, 2.25], [float("inf"), float("nan"), 7.0]])
    t = base.to(d) if d.is_floating_point else retrograd.tensor([[0, 1, 2], [3, 1, 0]]).to(d)
    out = _round_trip(t)
    _same(out, t)


def test_shapes_and_layouts():
    cases = [retrograd.tensor(3.5), retrograd.empty(0, 4), retrograd.arange(24.).reshape(2, 3, 4),
             retrograd.arange(12.).reshape(3, 4).t(), retrograd.arange(10.)[::3]]
    for t in cases:
        out = _round_trip(t)
        _same(out, t)  # tobytes() reads in logical (C) order whatever the layout
        assert out.tolist() == t.tolist()
    assert _round_trip(cases[3]).stride() == cases[3].stride()  # a transposed tensor stays so


def test_requires_grad_leaves_and_parameters():
    nn = pytest.importorskip("retrograd.nn")
    w = retrograd.randn(3, requires_grad=True)
    p = nn.Parameter(retrograd.randn(2))
    frozen = nn.Parameter(retrograd.randn(2), requires_grad=False)
    out = _round_trip({"w": w, "y": w * 2, "p": p, "frozen": frozen})
    assert out["w"].requires_grad and out["w"].is_leaf and out["w"].grad is None
    assert out["y"].requires_grad and out["y"].is_leaf  # saved as data, like torch
    assert isinstance(out["p"], nn.Parameter) and out["p"].requires_grad
    assert isinstance(out["frozen"], nn.Parameter) and not out["frozen"].requires_grad
    np.testing.assert_array_equal(out["p"].detach().numpy(), p.detach().numpy())


def test_nested_structures():
    t = retrograd.arange(3)
    obj = {
        "list": [1, 2.5, "s", None, True, False, (t, [t])],
        "tuple": (1, (2, 3)),
        1: "int key",
        (1, "a"): "tuple key",
        2.5: float("-inf"),
        "nan": float("nan"),
        "big": 2**100,
        "dtype": retrograd.bfloat16,
        "device": retrograd.device("cpu"),
        "size": retrograd.Size([2, 3]),
        "bytes": b"\x00\xff",
        "complex": 1.5 - 2j,
        "set": {1, 2},
        "frozenset": frozenset({"a"}),
        "counter": Counter({3: 2}),
        "np": np.arange(4, dtype=np.int16).reshape(2, 2),
        "npscalar": np.float32(0.25),
        "empty": {},
    }
    out = _round_trip(obj)
    assert out.keys() == obj.keys()
    assert out["list"][:6] == [1, 2.5, "s", None, True, False]
    assert out["list"][6][0] is out["list"][6][1][0]  # one tensor saved twice loads as one
    assert out["list"][6][0].tolist() == [0, 1, 2]
    assert out["tuple"] == (1, (2, 3)) and type(out["tuple"][1]) is tuple
    assert out[1] == "int key" and out[(1, "a")] == "tuple key" and out[2.5] == -math.inf
    assert math.isnan(out["nan"]) and out["big"] == 2**100
    assert out["dtype"] is retrograd.bfloat16 and out["device"] == retrograd.device("cpu")
    assert type(out["size"]) is retrograd.Size and out["size"] == (2, 3)
    assert out["bytes"] == b"\x00\xff" and out["complex"] == 1.5 - 2j
    assert out["set"] == {1, 2} and out["frozenset"] == frozenset({"a"})
    assert type(out["counter"]) is Counter and out["counter"] == {3: 2}
    assert out["np"].dtype == np.int16 and out["np"].tolist() == [[0, 1], [2, 3]]
    assert type(out["npscalar"]) is np.float32 and out["npscalar"] == 0.25
    assert out["empty"] == {}


def test_module_state_dict_round_trip(tmp_path):
    nn = pytest.importorskip("retrograd.nn")
    model = nn.Linear(4, 3)
    sd = model.state_dict()
    path = tmp_path / "model.pt"
    retrograd.serialization.save(sd, path)
    out = load(str(path), map_location="cpu", weights_only=True)
    assert type(out) is OrderedDict and list(out) == list(sd)
    assert getattr(out, "_metadata", None) == getattr(sd, "_metadata", None)
    model2 = nn.Linear(4, 3)
    model2.load_state_dict(out)
    x = retrograd.randn(2, 4)
    np.testing.assert_array_equal(model2(x).detach().numpy(), model(x).detach().numpy())


def test_file_objects_and_paths(tmp_path):
    t = retrograd.randn(5)
    path = tmp_path / "t.pt"
    with open(path, "wb") as f:
        save(t, f)
    with open(path, "rb") as f:
        _same(load(f), t)
    save([t], str(path))
    _same(load(path)[0], t)
    for loc in (None, "cpu", retrograd.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: s):
        _same(load(path, map_location=loc)[0], t)

    class Unseekable(io.RawIOBase):
        def __init__(self, data):
            self.inner = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self.inner.readinto(b)

        def seekable(self):
            return False

    _same(load(Unseekable(path.read_bytes()))[0], t)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.pt")


def test_optimizer_state_dict_round_trip():
    import retrograd.optim as optim

    w = retrograd.randn(3, requires_grad=True)
    opt = optim.Adam([w], lr=0.1, amsgrad=True)
    (w ** 2).sum().backward()
    opt.step()
    sd = opt.state_dict()
    out = _round_trip(sd)
    assert out["param_groups"] == sd["param_groups"]
    assert type(out["param_groups"][0]["betas"]) is tuple
    for key, v in sd["state"][0].items():
        _same(out["state"][0][key], v)


def test_unsupported_objects_are_refused():
    class Custom:
        pass

    for obj in (Custom(), {"f": lambda: 0}, np.array([object()]), [print]):
        with pytest.raises(TypeError, match="retrograd.save: cannot save"):
            save(obj, io.BytesIO())
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="nested too deeply"):
        save(loop, io.BytesIO())


def _saved_bytes():
    buf = io.BytesIO()
    save({"w": retrograd.randn(64, 8), "b": retrograd.arange(10), "meta": [1, "x", 2.5]}, buf)
    return buf.getvalue()


def test_truncated_files_raise():
    raw = _saved_bytes()
    for cut in list(range(0, len(raw), max(1, len(raw) // 97))) + [len(raw) - 1]:
        with pytest.raises(RuntimeError, match="is not a valid retrograd checkpoint"):
            load(io.BytesIO(raw[:cut]))


def test_random_bytes_raise():
    rs = np.random.RandomState(0)
    for n in (0, 1, 22, 100, 5000):
        with pytest.raises(RuntimeError, match="is not a valid retrograd checkpoint"):
            load(io.BytesIO(rs.bytes(n)))
    # random bytes behind a valid zip signature
    with pytest.raises(RuntimeError):
        load(io.BytesIO(b"PK\x03\x04" + rs.bytes(500)))


def test_flipped_bytes_never_load_wrong_data():
    raw = _saved_bytes()
    original = load(io.BytesIO(raw))
    for pos in range(0, len(raw), 7):
        damaged = bytearray(raw)
        damaged[pos] ^= 0x5A
        try:
            out = load(io.BytesIO(bytes(damaged)))
        except RuntimeError:
            continue
        # a flip in zip metadata the reader does not use (timestamps, ...) is harmless
        assert out["meta"] == original["meta"]
        for k in ("w", "b"):
            assert out[k]._data.tobytes() == original[k]._data.tobytes()


def _rewrite(raw, edit_manifest=None, extra=None, drop=None):
    """A copy of checkpoint `raw` with its manifest edited and/or members added or dropped."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == drop:
                continue
            if info.filename.endswith("manifest.json") and edit_manifest is not None:
                doc = json.loads(data)
                edit_manifest(doc)
                data = json.dumps(doc).encode()
            dst.writestr(info.filename, data)
        for name, data in (extra or {}).items():
            dst.writestr(name, data)
    return out.getvalue()


def _set_root(value):
    """A version 1 manifest (nested JSON, one typed array per tensor): still read."""
    def edit(doc):
        doc.pop("nodes")
        doc.update(version=1, root=value)
    return edit


@pytest.mark.parametrize("edit", [
    _set_root({"$": "pickle", "v": "cos\nsystem\n(S'echo hi'\ntR."}),
    _set_root({"$": "tensor", "i": 0, "dtype": "float32", "shape": [3],
               "requires_grad": False}),  # wrong shape
    _set_root({"$": "tensor", "i": 0, "dtype": "int64", "shape": [64, 8],
               "requires_grad": False}),  # wrong dtype
    _set_root({"$": "tensor", "i": 0, "dtype": "Tensor", "shape": [64, 8]}),
    _set_root({"$": "tensor", "i": 99, "dtype": "float32", "shape": [1]}),
    _set_root({"$": "tensor", "i": "0", "dtype": "float32", "shape": [64, 8]}),
    _set_root({"$": "tensor", "i": 1, "dtype": "int64", "shape": [10],
               "requires_grad": True}),  # requires_grad on integers
    _set_root({"$": "dict", "v": [[{"$": "list", "v": []}, 1]]}),  # unhashable key
    _set_root({"$": "dict", "v": [[1]]}),
    _set_root({"$": "dict", "v": [], "meta": {"$": "dict", "v": []}}),
    _set_root({"$": "float", "v": "1e5"}),
    _set_root({"$": "bytes", "v": "***"}),
    _set_root([1, 2]),
    _set_root({"no": "tag"}),
    lambda doc: doc.update(magic="something-else"),
    lambda doc: doc.update(version=99),
    lambda doc: doc.pop("root"),
])
def test_tampered_manifest_raises(edit):
    raw = _rewrite(_saved_bytes(), edit_manifest=edit)
    with pytest.raises(RuntimeError, match="is not a valid retrograd checkpoint"):
        load(io.BytesIO(raw))


def test_deep_nesting_in_manifest_raises():
    node = {"$": "list", "v": []}
    for _ in range(5000):
        node = {"$": "list", "v": [node]}
    with pytest.raises(RuntimeError):
        load(io.BytesIO(_rewrite(_saved_bytes(), edit_manifest=_set_root(node))))


def test_object_arrays_and_pickles_are_never_loaded(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            import os
            return (os.system, (f"touch {marker}",))

    # an object array member (np.save with pickles) in place of tensor data
    evil_npy = io.BytesIO()
    np.save(evil_npy, np.array([Evil()], dtype=object), allow_pickle=True)
    raw = _rewrite(_saved_bytes(), drop="retrograd/data/0.npy",
                   extra={"retrograd/data/0.npy": evil_npy.getvalue()})
    with pytest.raises(RuntimeError):
        load(io.BytesIO(raw))
    # a torch-style archive whose data.pkl would run code if unpickled
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("archive/data.pkl", pickle.dumps(Evil()))
    with pytest.raises(RuntimeError, match="Unsupported global: GLOBAL (posix|nt).system"):
        load(io.BytesIO(out.getvalue()))  # read by the allowlist unpickler, which refuses it
    # a bare pickle file
    with pytest.raises(RuntimeError):
        load(io.BytesIO(pickle.dumps(Evil())))
    assert not marker.exists()


def test_torch_checkpoint_loads(tmp_path):
    torch = pytest.importorskip("torch")  # (more in tests/test_torch_checkpoint.py)
    path = tmp_path / "torch.pt"
    torch.save({"w": torch.arange(2.0)}, path)
    assert load(path)["w"].tolist() == [0.0, 1.0]


def test_array_size_lie_raises():
    # an .npy header claiming far more data than the member holds
    raw = _saved_bytes()
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False,
                                                  "shape": (10**9,)})
    edited = _rewrite(raw, drop="retrograd/data/0.npy",
                      extra={"retrograd/data/0.npy": header.getvalue() + b"\0" * 16},
                      edit_manifest=_set_root({"$": "tensor", "i": 0, "dtype": "float32",
                                               "shape": [10**9], "requires_grad": False}))
    with pytest.raises(RuntimeError, match="wrong size"):
        load(io.BytesIO(edited))


def test_scheduler_state_dict_round_trip():
    import retrograd.optim as optim
    from retrograd.optim import lr_scheduler

    def make():
        opt = optim.SGD([retrograd.zeros(2, requires_grad=True)], lr=0.1, momentum=0.9)
        return opt, [lr_scheduler.MultiStepLR(opt, milestones=[2, 2, 5]),
                     lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=20)]

    opt, scheds = make()
    for _ in range(3):
        opt.step()
        for s in scheds:
            s.step()
    saved = _round_trip([s.state_dict() for s in scheds])
    assert type(saved[0]["milestones"]) is Counter
    opt2, scheds2 = make()
    for s, sd in zip(scheds2, saved):
        s.load_state_dict(sd)
    opt2.load_state_dict(_round_trip(opt.state_dict()))
    for _ in range(5):
        for o, ss in ((opt, scheds), (opt2, scheds2)):
            o.step()
            for s in ss:
                s.step()
        assert [s.get_last_lr() for s in scheds2] == [s.get_last_lr() for s in scheds]


def test_version_1_checkpoints_still_load():
    # version 1: nested manifest, one typed array per tensor (bfloat16 as raw uint16)
    doc = {"magic": "retrograd-checkpoint", "version": 1, "root": {"$": "dict", "v": [
        ["w", {"$": "tensor", "i": 0, "dtype": "bfloat16", "shape": [2],
               "requires_grad": True}],
        ["again", {"$": "tensor", "i": 0, "dtype": "bfloat16", "shape": [2],
                   "requires_grad": True}],
        ["c", {"$": "complex", "re": 1.5, "im": {"$": "float", "v": "-inf"}}]]}}
    arr = io.BytesIO()
    np.save(arr, np.array([0x3F80, 0x4000], dtype=np.uint16))  # bfloat16 1.0, 2.0
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("retrograd/manifest.json", json.dumps(doc))
        zf.writestr("retrograd/data/0.npy", arr.getvalue())
    got = load(io.BytesIO(out.getvalue()))
    assert got["w"].dtype is retrograd.bfloat16 and got["w"].tolist() == [1.0, 2.0]
    assert got["w"].requires_grad and got["again"] is got["w"]
    assert got["c"] == complex(1.5, float("-inf"))
