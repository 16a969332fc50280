"""What saved-tensor strategies save, and what they cost: a 16-layer MLP training step.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/memory.py

For each strategy (plain saving, checkpoint every 4 layers, float16 pack hook, float8_e4m3fn
pack hook with a per-tensor scale) prints: bytes the saved tensors hold after the forward
(counted by the pack hooks, each tensor once), the peak RSS of a process that runs only that
strategy (resource.getrusage), the time of one step, and how far the gradients are from plain
saving's.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import retrograd
from retrograd.train import saved as S
from retrograd.utils.checkpoint import checkpoint

LAYERS, WIDTH, BATCH = 16, 512, 512


def make_params(seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(LAYERS):
        w = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
        out.append(retrograd.tensor(w, requires_grad=True))
        out.append(retrograd.zeros(WIDTH, requires_grad=True))
    return out


def layers(params: list, start: int, stop: int):
    def run(h):
        for i in range(start, stop):
            h = retrograd.nn.functional.linear(h, params[2 * i], params[2 * i + 1]).tanh()
        return h

    return run


def step(params: list, x, strategy: str, meter: S.SavedMeter):
    with S.saving(retrograd, "keep" if strategy == "checkpoint" else strategy, meter):
        if strategy == "checkpoint":
            h = x
            for s in range(0, LAYERS, 4):
                meter.add(h)  # what checkpoint keeps: each segment's input
                h = checkpoint(layers(params, s, s + 4), h, use_reentrant=False)
        else:
            h = layers(params, 0, LAYERS)(x)
        loss = (h * h).mean()
    saved = meter.bytes
    loss.backward()
    return saved


def measure(strategy: str) -> dict:
    params = make_params()
    x = retrograd.tensor(np.random.default_rng(1).standard_normal((BATCH, WIDTH)).astype(
        np.float32))
    meter = S.SavedMeter()
    step(params, x, strategy, meter)  # warm up
    for p in params:
        p.grad = None
    meter.reset()
    t0 = time.perf_counter()
    saved = step(params, x, strategy, meter)
    elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"saved": saved, "peak": peak, "time": elapsed,
            "grads": [p.grad.numpy().copy() for p in params]}


def run_one(strategy: str, out_path: str) -> None:
    r = measure(strategy)
    np.savez(out_path, *r["grads"], saved=r["saved"], peak=r["peak"], time=r["time"])


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        run_one(sys.argv[2], sys.argv[3])
        return
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for s in ("keep", "checkpoint", "float16", "float8"):
            path = os.path.join(tmp, s + ".npz")
            subprocess.run([sys.executable, __file__, "--one", s, path], check=True)
            with np.load(path) as z:
                grads = [z[f"arr_{i}"] for i in range(2 * LAYERS)]
                results[s] = {"saved": int(z["saved"]), "peak": int(z["peak"]),
                              "time": float(z["time"]), "grads": grads}
    ref = results["keep"]
    print(f"16-layer MLP ({WIDTH} wide, tanh), batch {BATCH}, one training step")
    print(f"{'strategy':12s} {'saved MiB':>10s} {'vs keep':>8s} {'peak RSS MiB':>13s} "
          f"{'time ms':>8s} {'max rel grad err':>17s}")
    for name, r in results.items():
        err = max(float(np.abs(g - g0).max() / (np.abs(g0).max() + 1e-30))
                  for g, g0 in zip(r["grads"], ref["grads"]))
        print(f"{name:12s} {r['saved'] / 2**20:10.1f} {r['saved'] / ref['saved']:8.2f} "
              f"{r['peak'] / 2**20:13.1f} {r['time'] * 1e3:8.1f} {err:17.2e}")


if __name__ == "__main__":
    main()
