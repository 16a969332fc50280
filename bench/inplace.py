"""In-place ops on views vs their out-of-place equivalent, forward+backward, one run.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/inplace.py

For a select and a slice of a 64x64 working copy: `b[k].mul_(y)` (CopySlices; the view is
recovered from the gradient by as_strided geometry, or by replaying the recorded view ops)
against the same math without in-place (`where` over the region), and torch's in-place. The
default recovery replays such plain views; "as_strided" forces the geometry path.
"""

from __future__ import annotations

import numpy as np

try:
    from bench._timing import best_of
except ImportError:  # run as a script from bench/
    from _timing import best_of

import retrograd
from retrograd._autograd.copy_slices import use_view_replay

try:
    import torch
except ImportError:
    torch = None

N = 64
VIEWS = {"select": (lambda t: t[3], (3, slice(None))),
         "slice": (lambda t: t[8:40, 4:60:2], (slice(8, 40), slice(4, 60, 2)))}


def inplace_step(lib, view_fn):
    x = lib.tensor(np.random.default_rng(0).random((N, N), dtype=np.float32),
                   requires_grad=True)
    y = lib.tensor(np.float32(1.5), requires_grad=True)

    def run():
        b = x * 1.0
        view_fn(b).mul_(y)
        b.sum().backward()
        x.grad = None
        y.grad = None

    return run


def out_of_place_step(view_index):
    x = retrograd.tensor(np.random.default_rng(0).random((N, N), dtype=np.float32),
                         requires_grad=True)
    y = retrograd.tensor(np.float32(1.5), requires_grad=True)
    mask_np = np.zeros((N, N), bool)
    mask_np[view_index] = True
    mask = retrograd.tensor(mask_np)

    def run():
        b = x * 1.0
        b = retrograd.where(mask, b * y, b)
        b.sum().backward()
        x.grad = None
        y.grad = None

    return run


def main() -> None:
    print(f"in-place on a view of a {N}x{N} float32 tensor, forward+backward (us per step)")
    print(f"{'view':8s} {'out-of-place':>13s} {'as_strided':>11s} {'replay':>8s} {'torch':>8s}"
          f" {'ratio as_strided':>17s} {'ratio replay':>13s}")
    for name, (view_fn, index) in VIEWS.items():
        oop = best_of(out_of_place_step(index))
        use_view_replay.geometry = True
        geo = best_of(inplace_step(retrograd, view_fn))
        use_view_replay.geometry = False
        rep = best_of(inplace_step(retrograd, view_fn))  # the default: replay for such views
        tor = best_of(inplace_step(torch, view_fn)) if torch is not None else float("nan")
        print(f"{name:8s} {oop * 1e6:13.1f} {geo * 1e6:11.1f} {rep * 1e6:8.1f} {tor * 1e6:8.1f}"
              f" {geo / oop:17.2f} {rep / oop:13.2f}")


if __name__ == "__main__":
    main()
