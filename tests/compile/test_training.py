"""Compiled models train to eager's parameters: an MLP, the digits CNN of retrograd.train and a
transformer encoder block, 20 SGD steps each, from the same initial weights."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import retrograd
from retrograd import nn
from retrograd.train.model import build_cnn


def _mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 3))


def _cnn():
    return build_cnn(retrograd)


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                                dropout=0.0, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.layer(x).mean(1))


def _data(kind: str, step: int):
    rng = np.random.default_rng(step)
    shape = {"mlp": (8, 6), "cnn": (4, 1, 8, 8), "transformer": (4, 5, 16)}[kind]
    x = retrograd.tensor(rng.standard_normal(shape).astype(np.float32))
    y = retrograd.tensor(rng.integers(0, 3, size=shape[0]))
    return x, y


def _train(model, kind: str, steps: int = 20):
    opt = retrograd.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for step in range(steps):
        x, y = _data(kind, step)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("kind", ["mlp", "cnn", "transformer"])
def test_compiled_training_matches_eager(kind):
    retrograd.manual_seed(0)
    eager = {"mlp": _mlp, "cnn": _cnn, "transformer": _Block}[kind]()
    compiled = copy.deepcopy(eager)
    compiled.compile()
    eager_losses = _train(eager, kind)
    compiled_losses = _train(compiled, kind)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5, atol=1e-6)
    for (name, p), q in zip(eager.named_parameters(), compiled.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=name)
    variants = compiled._compiled_call_impl.variants.values()
    assert [v.eager_reason for v in variants] == [None]  # one graph, compiled, reused
    assert retrograd.compiler.counters["compiles"] == 1
