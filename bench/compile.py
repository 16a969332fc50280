"""retrograd.compile against eager: one training step (forward, backward) of small models,
timed in alternation in one run.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c 0 python bench/compile.py

Prints milliseconds per step and the speedup (eager / compiled), and the time the first
compiled call takes (capture, checks and code generation).
"""

from __future__ import annotations

import copy
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import best_of_each  # noqa: E402

import retrograd  # noqa: E402
from retrograd import nn  # noqa: E402
from retrograd.train.model import build_cnn  # noqa: E402


def models() -> dict:
    retrograd.manual_seed(0)
    tiny = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    mlp = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.Tanh(),
                        nn.Linear(256, 10))
    block = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                       batch_first=True)
    rng = np.random.default_rng(0)

    def data(*shape):
        return retrograd.tensor(rng.standard_normal(shape).astype(np.float32))

    return {"tiny MLP (batch 8)": (tiny, data(8, 16)),
            "MLP (batch 64)": (mlp, data(64, 64)),
            "digits CNN (batch 32)": (build_cnn(retrograd), data(32, 1, 8, 8)),
            "transformer block (4x16x32)": (block, data(4, 16, 32))}


def step(model, x) -> None:
    for p in model.parameters():
        p.grad = None
    model(x).square().mean().backward()


def main() -> None:
    os.environ.setdefault("RETROGRAD_CACHE_DIR", tempfile.mkdtemp())
    print(f"{'model':30s} {'eager ms':>9s} {'compiled ms':>12s} {'speedup':>8s} "
          f"{'first call s':>13s}")
    for name, (model, x) in models().items():
        compiled = copy.deepcopy(model)
        compiled.compile()
        t0 = time.perf_counter()
        step(compiled, x)
        first = time.perf_counter() - t0
        t = best_of_each({"eager": lambda m=model, x=x: step(m, x),
                          "compiled": lambda m=compiled, x=x: step(m, x)}, repeat=7, number=20)
        print(f"{name:30s} {t['eager'] * 1e3:9.3f} {t['compiled'] * 1e3:12.3f} "
              f"{t['eager'] / t['compiled']:7.2f}x {first:13.2f}")


if __name__ == "__main__":
    main()
