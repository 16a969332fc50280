"""The cost of torch's random streams: retrograd's samplers against torch's and against NumPy's
own generator drawing the same amount (the speed floor of a NumPy library), side by side.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c 0 python bench/random_draws.py

retrograd draws torch's numbers (NOTE [torch's random streams]): float32 normals go through
torch's vectorized log and sincos emulated operation by operation, float64 logarithms through
the C library per value, so they cost more than NumPy's own samplers, which draw other numbers.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import best_of_each  # noqa: E402

import retrograd  # noqa: E402

try:
    import torch
except ImportError:  # the comparison needs torch; retrograd and NumPy run without it
    torch = None

N = 1 << 20  # draws per call
rng = np.random.default_rng(0)

CASES = {
    "rand float32": (lambda L: L.rand(N), lambda: rng.random(N, dtype=np.float32)),
    "randn float32": (lambda L: L.randn(N), lambda: rng.standard_normal(N, dtype=np.float32)),
    "randn float64": (lambda L: L.randn(N, dtype=L.float64), lambda: rng.standard_normal(N)),
    "uniform_(-1, 1) float32": (lambda L: L.empty(N).uniform_(-1, 1),
                                lambda: rng.uniform(-1, 1, N).astype(np.float32)),
    "randint(0, 1000)": (lambda L: L.randint(0, 1000, (N,)), lambda: rng.integers(0, 1000, N)),
    "randperm(2**16)": (lambda L: L.randperm(1 << 16), lambda: rng.permutation(1 << 16)),
    "dropout(p=0.1) float32": (lambda L: L.nn.functional.dropout(ONES[L.__name__], 0.1),
                               lambda: (rng.random(N, dtype=np.float32) < 0.9) / np.float32(0.9)),
}
ONES = {"retrograd": retrograd.ones(N)}
if torch is not None:
    ONES["torch"] = torch.ones(N)


def main() -> None:
    if torch is not None:
        torch.set_num_threads(1)
    print(f"{N} draws per call, ms (best of 5)")
    for name, (lib_call, numpy_call) in CASES.items():
        fns = {"retrograd": lambda c=lib_call: c(retrograd), "numpy": numpy_call}
        if torch is not None:
            fns["torch"] = lambda c=lib_call: c(torch)
        t = best_of_each(fns, 5, 2)
        ratio = f", retrograd / torch {t['retrograd'] / t['torch']:.1f}x" if "torch" in t else ""
        print(f"  {name:26s} " + ", ".join(f"{k} {v * 1e3:7.2f}" for k, v in t.items()) +
              f"; retrograd / numpy {t['retrograd'] / t['numpy']:.1f}x{ratio}")


if __name__ == "__main__":
    main()
