"""The main job end to end: `retrograd train` for every --saved-tensors choice, and torch.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/train.py [--epochs 15]

Prints test accuracy, wall time, peak memory (RSS) and saved-activation bytes per step.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys


def run(args: list) -> dict:
    out = subprocess.run([sys.executable, "-m", "retrograd", "train", "--no-progress", *args],
                         capture_output=True, text=True, check=True).stdout
    acc = float(re.search(r"test accuracy ([\d.]+)%", out).group(1))
    wall = float(re.search(r"wall time ([\d.]+)s", out).group(1))
    peak = float(re.search(r"peak memory (\d+) MB", out).group(1))
    saved = float(re.search(r"saved activations per step \(\w+\): ([\d.]+) KiB", out).group(1))
    return {"acc": acc, "wall": wall, "peak": peak, "saved": saved}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=20)
    a = p.parse_args()
    rows = [("retrograd", c, ["--saved-tensors", c]) for c in
            ("keep", "float16", "float8", "checkpoint", "cpu")]
    if importlib.util.find_spec("torch") is not None:
        rows.append(("torch", "keep", ["--backend", "torch"]))
    print(f"digits CNN, {a.epochs} epochs")
    print(f"{'backend':10s} {'saved-tensors':14s} {'accuracy %':>10s} {'wall s':>7s} "
          f"{'peak MB':>8s} {'saved KiB/step':>15s}")
    for backend, choice, extra in rows:
        r = run(["--epochs", str(a.epochs), *extra])
        print(f"{backend:10s} {choice:14s} {r['acc']:10.2f} {r['wall']:7.1f} {r['peak']:8.0f} "
              f"{r['saved']:15.1f}")


if __name__ == "__main__":
    main()
