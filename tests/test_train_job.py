"""The main job (`retrograd train`): the digits CNN learns, the options work."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import retrograd
from retrograd.train import saved as S
from retrograd.train.data import load_digits_split
from retrograd.train.model import build_cnn

pytest.importorskip("sklearn")


def _short_training(choice: str, steps: int = 30, seed: int = 0):
    retrograd.manual_seed(seed)
    x_train, y_train, x_test, y_test = load_digits_split(seed=seed)
    model = build_cnn(retrograd, checkpoint_blocks=choice == "checkpoint")
    opt = retrograd.optim.Adam(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(seed)
    meter = S.SavedMeter()
    losses, saved = [], []
    for _ in range(steps):
        idx = rng.choice(len(x_train), 64, replace=False)
        xb, yb = retrograd.from_numpy(x_train[idx]), retrograd.from_numpy(y_train[idx])
        meter.reset()
        with S.saving(retrograd, choice, meter):
            loss = retrograd.nn.functional.cross_entropy(model(xb), yb)
        saved.append(meter.bytes)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with retrograd.no_grad():
        pred = model(retrograd.from_numpy(x_test)).argmax(1).numpy()
    return losses, float((pred == y_test).mean()), saved[0]


def test_digits_cnn_learns():
    losses, acc, _ = _short_training("keep", steps=60)
    assert np.mean(losses[-10:]) < 0.6 * np.mean(losses[:5])
    assert acc > 0.5  # chance is 0.1


@pytest.mark.parametrize("choice", ["float16", "float8", "checkpoint", "cpu"])
def test_saved_tensor_strategies_train_and_save_less(choice):
    base_losses, _, base_bytes = _short_training("keep", steps=8)
    losses, _, saved = _short_training(choice, steps=8)
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(losses[0], base_losses[0], rtol=1e-2)
    expected = {"float16": 0.5, "float8": 0.25, "cpu": 1.0, "checkpoint": 0.5}[choice]
    assert saved <= base_bytes * expected * 1.05


def test_graph_export_dot(tmp_path):
    from retrograd.train.graph_export import write_graph

    model = build_cnn(retrograd)
    x = retrograd.randn(2, 1, 8, 8)
    loss = model(x).sum()
    written = write_graph(loss, str(tmp_path / "g.dot"))
    text = (tmp_path / "g.dot").read_text()
    assert written[0].endswith("g.dot")
    for name in ("ConvolutionBackward0", "ReluBackward0", "AccumulateGrad", "AddmmBackward0"):
        assert name in text
    assert "(16, 1, 3, 3)" in text  # a parameter's shape on its AccumulateGrad node
    assert "mat1: (2, 64)" in text  # a saved tensor's shape on the node that saved it


def test_cli_runs_one_epoch():
    out = subprocess.run([sys.executable, "-m", "retrograd", "train", "--epochs", "1",
                          "--no-progress", "--saved-tensors", "float16"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "test accuracy" in out.stdout and "saved activations per step (float16)" in \
        out.stdout
