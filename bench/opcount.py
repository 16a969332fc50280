"""Python bytecodes executed per case of bench/overhead.py: a load-independent view of the
per-op cost, for comparing two source trees on a busy machine.

    PYTHONPATH=<tree>/src python bench/opcount.py

Wall and CPU time on a shared machine drift by 10-50% between runs; the number of bytecodes
an op runs does not drift at all (NumPy's C work is not counted, so this measures the Python
overhead only: time still decides, measured on a quiet machine). Counted with sys.settrace's
opcode events over a few iterations after a warm-up.
"""

from __future__ import annotations

import collections
import sys

import numpy as np

try:
    import overhead as o
except ImportError:  # run from the repository root
    sys.path.insert(0, "bench")
    import overhead as o

import retrograd


def _cases() -> dict:
    rng = np.random.default_rng(0)
    chain = o.chain_lib(retrograd, rng.random(16, dtype=np.float32),
                        rng.random(16, dtype=np.float32))
    tiny = o.mlp_lib(retrograd, rng.standard_normal((4, 8)).astype(np.float32),
                     rng.integers(0, 10, 4), o.TINY)
    mlp = o.mlp_lib(retrograd, rng.standard_normal((o.BATCH, o.SIZES[0])).astype(np.float32),
                    rng.integers(0, o.SIZES[-1], o.BATCH))
    block = o.block_lib(retrograd, rng.standard_normal((o.B, o.T, o.D)).astype(np.float32))
    # (per op for the chain, per step for the others)
    return {"chain (per op)": (chain, o.CHAIN_STEPS * 3), "tiny MLP step": (tiny, 1),
            "MLP step": (mlp, 1), "transformer block": (block, 1)}


def count(fn, n: int = 3) -> tuple:
    """(bytecodes per call, the ten functions that ran most of them)."""
    fn()
    per_fn: collections.Counter = collections.Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            per_fn[frame.f_code.co_name] += 1
        return tracer

    sys.settrace(tracer)
    try:
        for _ in range(n):
            fn()
    finally:
        sys.settrace(None)
    return sum(per_fn.values()) / n, per_fn.most_common(10)


def main() -> None:
    print(f"retrograd from {retrograd.__file__}")
    for name, (fn, per) in _cases().items():
        total, top = count(fn)
        print(f"{name:20s} {total / per:10.1f} bytecodes")


if __name__ == "__main__":
    main()
