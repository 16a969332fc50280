"""overhead.py's cases for two checkouts of retrograd in one process, timed in alternation.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c 0 \\
        python bench/side_by_side.py BASE/src OURS/src [--rounds 40] [chain mlp block tiny]

Both source trees are imported side by side (each keeps its own modules, swapped into
sys.modules while it runs, for the imports made inside functions); each round times every case
once per checkout, the order alternating between rounds, in CPU time. On a shared machine this
separates a few percent where separate processes cannot; run BASE against a copy of itself for
the noise floor.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

_BENCH = os.path.dirname(os.path.abspath(__file__))


def _ours(name: str) -> bool:
    return name == "retrograd" or name.startswith("retrograd.")


def _load(src: str) -> tuple:
    sys.path.insert(0, src)
    import retrograd

    mods = {k: v for k, v in sys.modules.items() if _ours(k)}
    for k in mods:
        del sys.modules[k]
    sys.path.remove(src)
    return retrograd, mods


def _switch(mods: dict) -> None:
    """Make `mods` (one checkout's modules) the retrograd modules of sys.modules. Every
    retrograd module is taken out first: a submodule imported on first use by the other
    checkout (retrograd.fx, which traces the array formulas) would otherwise stay and serve
    this one, whose formulas then never match its own op classes."""
    for k in [k for k in sys.modules if _ours(k)]:
        del sys.modules[k]
    sys.modules.update(mods)


def _keep(mods: dict) -> None:
    """Record the submodules this checkout imported on first use since _switch."""
    mods.update({k: v for k, v in sys.modules.items() if _ours(k)})


def _cases(o, lib) -> dict:
    """name -> (step function, calls per timing, unit scale, unit)"""
    rng = np.random.default_rng(0)
    x, w = rng.random(16, dtype=np.float32), rng.random(16, dtype=np.float32)
    r1 = np.random.default_rng(1)
    x0 = r1.standard_normal((o.BATCH, o.SIZES[0])).astype(np.float32)
    y0 = r1.integers(0, o.SIZES[-1], o.BATCH)
    xb = np.random.default_rng(2).standard_normal((o.B, o.T, o.D)).astype(np.float32)
    r1 = np.random.default_rng(1)
    xt = r1.standard_normal((4, o.TINY[0])).astype(np.float32)
    yt = r1.integers(0, o.TINY[-1], 4)
    return {"chain": (o.chain_lib(lib, x, w), 10, 1e6 / (3 * o.CHAIN_STEPS), "us/op"),
            "mlp": (o.mlp_lib(lib, x0, y0), 1, 1e3, "ms"),
            "block": (o.block_lib(lib, xb), 1, 1e3, "ms"),
            "tiny": (o.mlp_lib(lib, xt, yt, o.TINY), 50, 1e6, "us")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("base")
    parser.add_argument("ours")
    parser.add_argument("cases", nargs="*", default=["chain", "mlp", "block", "tiny"])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_intermixed_args()
    sides = {"base": _load(args.base), "ours": _load(args.ours)}
    sys.path.insert(0, _BENCH)
    fns = {}
    for side, (lib, mods) in sides.items():
        _switch(mods)
        import overhead  # its module-level retrograd is unused: the cases take `lib`

        fns[side] = _cases(overhead, lib)
        for name in args.cases:
            fns[side][name][0]()  # warm-up: first-use code generation
        _keep(mods)
    best = {(s, c): float("inf") for s in sides for c in args.cases}
    for r in range(args.rounds):
        for case in args.cases:
            for side in ("base", "ours") if r % 2 == 0 else ("ours", "base"):
                _switch(sides[side][1])
                fn, n = fns[side][case][:2]
                t0 = time.process_time()
                for _ in range(n):
                    fn()
                best[side, case] = min(best[side, case], (time.process_time() - t0) / n)
                _keep(sides[side][1])
    for case in args.cases:
        scale, unit = fns["base"][case][2:]
        b, o = best["base", case], best["ours", case]
        print(f"{case:6s} base {b * scale:9.3f} {unit:5s} ours {o * scale:9.3f} {unit:5s} "
              f"{100 * (o / b - 1):+5.1f}%")


if __name__ == "__main__":
    main()
