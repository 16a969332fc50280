"""The MLP the pipeline tests train: stages of Linear(64, 64) + tanh, MSE loss, float64."""

from __future__ import annotations

import numpy as np

import retrograd as rg

WIDTH = 64


class LinearTanh:
    """One stage's layer (kept free of retrograd.nn so the pipeline tests stand alone)."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.w = rg.tensor(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH),
                           requires_grad=True)
        self.b = rg.tensor(rng.standard_normal(WIDTH) * 0.1, requires_grad=True)

    def __call__(self, x):
        return (x.mm(self.w) + self.b).tanh()

    def parameters(self):
        return [self.w, self.b]


def mse(out, target):
    diff = out - target
    return (diff * diff).mean()


def batch(seed: int = 100, n: int = 32):
    rng = np.random.default_rng(seed)
    return (rg.tensor(rng.standard_normal((n, WIDTH))), rg.tensor(rng.standard_normal((n, WIDTH))))


def reference_grads(layers: list, x, y, n_microbatches: int) -> tuple:
    """Single process, same microbatches in order, grads scaled like the schedules."""
    losses = []
    bounds = [len(x) * i // n_microbatches for i in range(n_microbatches + 1)]
    for i in range(n_microbatches):
        h = x[bounds[i]:bounds[i + 1]]
        for layer in layers:
            h = layer(h)
        loss = mse(h, y[bounds[i]:bounds[i + 1]])
        loss.backward()
        losses.append(loss.item())
    grads = []
    for layer in layers:
        for p in layer.parameters():
            grads.append(p.grad.numpy() / n_microbatches)
            p.grad = None
    return grads, losses
