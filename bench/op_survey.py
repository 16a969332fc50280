"""Single ops and layers, forward and backward, against torch eager on one core: a survey
that shows where retrograd's per-op cost stands and where a kernel falls behind (a ratio far
above the others is a place to look).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c 0 python bench/op_survey.py

torch runs with one intra-op thread, as the process is pinned to one core. Each case is timed
in alternation with its torch twin (best of five runs of three calls); printed slowest first.
"""

from __future__ import annotations

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))
from _timing import best_of_each  # noqa: E402

import retrograd  # noqa: E402

try:
    import torch
except ImportError:  # the survey is a comparison: without torch there is nothing to print
    torch = None


def programs(L) -> dict:
    F, nn = L.nn.functional, L.nn
    L.manual_seed(0)
    x = L.randn(64, 256, requires_grad=True)
    img = L.randn(8, 16, 32, 32, requires_grad=True)
    conv = nn.Conv2d(16, 32, 3, padding=1)
    emb = nn.Embedding(30000, 128)
    idx = L.randint(0, 30000, (32, 64))
    lstm = nn.LSTM(64, 128, batch_first=True)
    seq = L.randn(16, 50, 64, requires_grad=True)
    big = L.randn(1000, 1000)
    ids = L.randint(0, 100, (100000,))
    src = L.randn(100000)
    grid = L.rand(8, 32, 32, 2) * 2 - 1
    gn = nn.GroupNorm(4, 16)
    bn = nn.BatchNorm2d(16)
    mha = nn.MultiheadAttention(128, 4, batch_first=True)
    q = L.randn(8, 64, 128, requires_grad=True)
    return {
      "softmax_bwd": lambda: F.softmax(x, 1).sum().backward(),
      "conv2d_fwd_bwd": lambda: conv(img).sum().backward(),
      "maxpool_fwd_bwd": lambda: F.max_pool2d(img, 2).sum().backward(),
      "avgpool_fwd_bwd": lambda: F.avg_pool2d(img, 2).sum().backward(),
      "embedding_fwd_bwd": lambda: emb(idx).sum().backward(),
      "lstm_fwd_bwd": lambda: lstm(seq)[0].sum().backward(),
      "sort": lambda: big.sort(dim=1),
      "topk": lambda: big.topk(10, dim=1),
      "cumsum": lambda: big.cumsum(1),
      "unique": lambda: ids.unique(return_counts=True),
      "scatter_add": lambda: L.zeros(100).scatter_add_(0, ids, src),
      "index_add": lambda: L.zeros(100).index_add_(0, ids, src),
      "bincount": lambda: ids.bincount(),
      "interp_bilinear_bwd": lambda: F.interpolate(img, scale_factor=2,
                                                   mode="bilinear").sum().backward(),
      "grid_sample_bwd": lambda: F.grid_sample(img, grid, align_corners=False).sum().backward(),
      "groupnorm_bwd": lambda: gn(img).sum().backward(),
      "batchnorm_bwd": lambda: bn(img).sum().backward(),
      "mha_bwd": lambda: mha(q, q, q)[0].sum().backward(),
      "layernorm_bwd": lambda: F.layer_norm(x, (256,)).sum().backward(),
      "cross_entropy_bwd": lambda: F.cross_entropy(x, L.randint(0, 256, (64,))).backward(),
      "gather_bwd": lambda: x.gather(1, L.randint(0, 256, (64, 10))).sum().backward(),
      "index_bwd": lambda: x[L.randint(0, 64, (500,))].sum().backward(),
      "masked_select_bwd": lambda: x.masked_select(x > 0).sum().backward(),
      "cdist_bwd": lambda: L.cdist(x[:32], x[32:]).sum().backward(),
      "einsum_bwd": lambda: L.einsum("bi,bj->ij", x, x).sum().backward(),
      "pad_reflect_bwd": lambda: F.pad(img, (2, 2, 2, 2), mode="reflect").sum().backward(),
      "unfold_bwd": lambda: F.unfold(img, 3).sum().backward(),
    }


def adam_step(L):
    L.manual_seed(0)
    m = L.nn.Sequential(*[L.nn.Linear(256, 256) for _ in range(8)])
    opt = L.optim.Adam(m.parameters())
    for p in m.parameters():
        p.grad = L.randn_like(p)
    return lambda: opt.step()


def main() -> None:
    if torch is None:
        print("op_survey.py compares with torch: install torch==2.13.0")
        return
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    rows = []
    names = list(programs(torch)) + ["adam_step"]
    for name in names:
        if name == "adam_step":
            fns = {"torch": adam_step(torch), "retrograd": adam_step(retrograd)}
        else:
            fns = {"torch": programs(torch)[name], "retrograd": programs(retrograd)[name]}
        t = best_of_each(fns, 5, 3)
        rows.append((t["retrograd"] / t["torch"], name, t["torch"], t["retrograd"]))
    for ratio, name, theirs, ours in sorted(rows, reverse=True):
        print(f"{name:22s} torch {theirs * 1e3:8.3f} ms  retrograd {ours * 1e3:8.3f} ms  "
              f"retrograd / torch {ratio:5.1f}x")


if __name__ == "__main__":
    main()
