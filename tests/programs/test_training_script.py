"""A training script of the usual shape, run on torch and retrograd from the same seed alone:
the weights are not copied, since manual_seed gives both libraries the same initialization,
split, shuffles and dropout (NOTE [torch's random streams]). random_split and a shuffling
DataLoader with a seeded generator, BatchNorm1d, SGD with Nesterov momentum, a warm-up
LambdaLR and ReduceLROnPlateau, GradScaler (disabled) and autocast (disabled) as scripts write
them, clip_grad_value_, an evaluation loop, and a checkpoint saved, loaded and compared."""

from __future__ import annotations

import importlib
import os
import tempfile

import numpy as np
import pytest

import retrograd
from tests.programs.program_harness import assert_close

torch = pytest.importorskip("torch")


def _script(lib):
    nn, F = lib.nn, lib.nn.functional
    data = importlib.import_module(lib.__name__ + ".utils.data")
    lib.manual_seed(0)
    g = lib.Generator().manual_seed(42)
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((64, 10)).astype(np.float32))
    y = (x[:, :3].sum(1) > 0).long()
    train, val = data.random_split(data.TensorDataset(x, y), [48, 16], generator=g)
    loader = data.DataLoader(train, batch_size=16, shuffle=True, generator=g, drop_last=True)
    val_loader = data.DataLoader(val, batch_size=8)

    def make():
        return nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2),
                             nn.Linear(32, 2))

    model = make()
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                        weight_decay=1e-4)
    plateau = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=0)
    warm = lib.optim.lr_scheduler.LambdaLR(opt, lambda e: min(1.0, (e + 1) / 3))
    scaler = lib.amp.GradScaler("cpu", enabled=False)
    history = []
    for _ in range(3):
        model.train()
        for xb, yb in loader:
            opt.zero_grad(set_to_none=True)
            with lib.autocast("cpu", dtype=lib.bfloat16, enabled=False):
                loss = F.cross_entropy(model(xb), yb)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_value_(model.parameters(), 5.0)
            scaler.step(opt)
            scaler.update()
        warm.step()
        model.eval()
        total, correct, n = 0.0, 0, 0
        with lib.no_grad():
            for xb, yb in val_loader:
                out = model(xb)
                total += F.cross_entropy(out, yb, reduction="sum").item()
                correct += (out.argmax(dim=1) == yb).sum().item()
                n += yb.size(0)
        plateau.step(total / n)
        history.append((total / n, correct / n, opt.param_groups[0]["lr"]))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "checkpoint.pt")
        lib.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, path)
        saved = lib.load(path, map_location="cpu", weights_only=True)
        again = make()
        again.load_state_dict(saved["model"])
        again.eval()
        same = bool(lib.allclose(again(x[:4]), model(x[:4])))
    return history, same, model.state_dict()


def test_script_trains_like_torch_from_the_seed_alone():
    ours, theirs = _script(retrograd), _script(torch)
    assert ours[1] is theirs[1] is True
    assert_close(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    assert_close(ours[2], theirs[2], rtol=1e-5, atol=1e-6)
