"""retrograd.load reads checkpoints written by torch.save (NOTE [Reading torch checkpoints]):
values, dtypes, parameters, shared storages, a model and an optimizer that carry on from
torch's state, and the refusals (globals outside the allowlist, geometry past a storage)."""

from __future__ import annotations

import os
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def _roundtrip(obj, tmp_path, name="ckpt.pth"):
    path = tmp_path / name
    torch.save(obj, path)
    return retrograd.load(path)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64",
                                   "int32", "int16", "int8", "uint8", "bool",
                                   "float8_e4m3fn", "float8_e5m2"])
def test_tensors_of_every_dtype(tmp_path, dtype):
    src = (torch.arange(12) % 5 - 2).reshape(3, 4).to(getattr(torch, dtype))
    got = _roundtrip(src, tmp_path)
    assert isinstance(got, retrograd.Tensor) and got.dtype is getattr(retrograd, dtype)
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got.float().numpy(), src.float().numpy())


def test_geometry_sharing_and_flags(tmp_path):
    base = torch.arange(6.0)
    obj = {"base": base, "view": base[2:].view(2, 2), "t": torch.arange(6.0).reshape(2, 3).t(),
           "empty": torch.empty(0, 3), "scalar": torch.tensor(3), "grad": torch.ones(2,
                                                                                   requires_grad=True),
           "param": torch.nn.Parameter(torch.full((2,), 0.5))}
    got = _roundtrip(obj, tmp_path)
    for k in ("base", "view", "t", "empty", "scalar"):
        np.testing.assert_array_equal(got[k].numpy(), obj[k].numpy())
        assert got[k].stride() == obj[k].stride() and got[k].shape == tuple(obj[k].shape)
    got["base"][3] = 100.0  # the view shares the storage, as in torch
    np.testing.assert_array_equal(got["view"].numpy(), [[2.0, 100.0], [4.0, 5.0]])
    assert got["grad"].requires_grad and got["grad"].is_leaf
    assert isinstance(got["param"], retrograd.nn.Parameter) and got["param"].requires_grad


def test_python_values_and_torch_names(tmp_path):
    obj = {"dtype": torch.bfloat16, "size": torch.Size([2, 3]), "device": torch.device("cpu"),
           "bytes": b"xy", "set": {1, 2}, "frozen": frozenset({3}), "nested": [(1, 2.5, "a"),
                                                                             {"k": None}],
           "complex": 1 + 2j, "odict": OrderedDict(a=1)}
    got = _roundtrip(obj, tmp_path)
    assert got["dtype"] is retrograd.bfloat16 and got["size"] == retrograd.Size([2, 3])
    assert isinstance(got["size"], retrograd.Size) and str(got["device"]) == "cpu"
    assert got["bytes"] == b"xy" and got["set"] == {1, 2} and got["frozen"] == frozenset({3})
    assert got["nested"] == [(1, 2.5, "a"), {"k": None}] and got["complex"] == 1 + 2j
    assert isinstance(got["odict"], OrderedDict) and got["odict"] == OrderedDict(a=1)


def _model(lib):
    # (no bias right before the batch norm: its gradient is rounding noise that Adam magnifies)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.BatchNorm1d(8),
                             lib.nn.Linear(8, 3))


def test_a_torch_model_and_optimizer_carry_on_in_retrograd(tmp_path):
    torch.manual_seed(0)
    theirs = _model(torch)
    opt_t = torch.optim.Adam(theirs.parameters(), lr=0.01)
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2])
    for _ in range(2):
        opt_t.zero_grad()
        torch.nn.functional.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y)).backward()
        opt_t.step()
    state = _roundtrip({"model": theirs.state_dict(), "opt": opt_t.state_dict()}, tmp_path)
    assert list(state["model"]) == list(theirs.state_dict())
    assert state["model"]._metadata == theirs.state_dict()._metadata  # module versions kept
    ours = _model(retrograd)
    ours.load_state_dict(state["model"])
    opt_r = retrograd.optim.Adam(ours.parameters(), lr=0.01)
    opt_r.load_state_dict(state["opt"])
    for model, opt, lib in ((theirs, opt_t, torch), (ours, opt_r, retrograd)):
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y)).backward()
        opt.step()
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


class _Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def test_globals_outside_the_allowlist_are_refused(tmp_path):
    marker = str(tmp_path / "made_by_the_checkpoint")
    path = tmp_path / "evil.pth"
    torch.save({"x": _Evil(marker)}, path)
    with pytest.raises(RuntimeError, match=r"does not load by default\. Unsupported global: "
                                           r"GLOBAL posix\.mkdir"):
        retrograd.load(path)
    assert not os.path.exists(marker)  # nothing from the file ran


def test_a_tensor_reaching_past_its_storage_is_refused(tmp_path):
    path, cut = tmp_path / "ok.pth", tmp_path / "cut.pth"
    torch.save(torch.arange(4.0), path)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(cut, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info, data[:8] if info.filename.endswith("data/0") else data)
    with pytest.raises(RuntimeError, match="reaches past the end of its storage"):
        retrograd.load(cut)


def test_the_legacy_torch_format_is_refused_clearly(tmp_path):
    path = tmp_path / "legacy.pth"
    torch.save(torch.ones(2), path, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="not a valid retrograd checkpoint"):
        retrograd.load(path)
