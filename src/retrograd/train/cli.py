"""`retrograd train`: a small CNN on scikit-learn's digits, end to end.

    retrograd train [--epochs 15] [--saved-tensors keep|float16|float8|checkpoint|cpu]
                    [--graph graph.svg] [--backend retrograd|torch] [--compile]
                    [--nproc-per-node N]
"""

from __future__ import annotations

import argparse
import importlib
import resource
import sys
import time
from typing import Any

import numpy as np

from retrograd.train import saved as S
from retrograd.train.data import load_digits_split
from retrograd.train.model import build_cnn


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="retrograd train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--saved-tensors", choices=S.CHOICES, default="keep",
                   help="how activations are saved for backward")
    p.add_argument("--graph", metavar="FILE",
                   help="write the autograd graph of one training step (.dot, .svg or .png)")
    p.add_argument("--backend", choices=("retrograd", "torch"), default="retrograd")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--compile", action="store_true",
                   help="train the compiled model (retrograd.compile) and report its speedup")
    p.add_argument("--nproc-per-node", type=int, default=1, metavar="N",
                   help="train data-parallel on N processes (DistributedDataParallel over MPI); "
                        "--batch-size stays the global batch")
    args = p.parse_args(argv)
    if args.nproc_per_node < 1:
        p.error("--nproc-per-node must be at least 1")
    if args.nproc_per_node > 1 and args.backend != "retrograd":
        p.error("--nproc-per-node needs --backend retrograd")
    if args.nproc_per_node > 1 and (args.compile or args.graph):
        p.error("--nproc-per-node does not combine with --compile or --graph")
    return args


def _library(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        sys.exit(f"--backend {name}: {name} is not installed")


def evaluate(lib: Any, model: Any, x: np.ndarray, y: np.ndarray) -> float:
    model.eval()
    with lib.no_grad():
        logits = model(lib.from_numpy(x))
        pred = logits.argmax(1).numpy()
    model.train()
    return float((pred == y).mean())


def _progress(iterable, total: int, desc: str, disable: bool):
    try:
        from tqdm import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, total=total, desc=desc, disable=disable, leave=False,
                unit="batch", dynamic_ncols=True)


def train(args: argparse.Namespace) -> dict:
    lib = _library(args.backend)
    lib.manual_seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits_split(seed=args.seed)
    model = build_cnn(lib, checkpoint_blocks=args.saved_tensors == "checkpoint")
    dp = None
    if getattr(args, "nproc_per_node", 1) > 1:
        from retrograd.train.data_parallel import DataParallelRun

        dp = DataParallelRun()
        model = dp.wrap(model)
    say = print if dp is None or dp.is_main else _silent
    eager_model = None
    if getattr(args, "compile", False):
        import copy

        eager_model = copy.deepcopy(model)
        model.compile()
    opt = lib.optim.Adam(model.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    n = len(x_train)
    steps_per_epoch = (n + args.batch_size - 1) // args.batch_size
    # cosine decay to zero over the run: the last epochs settle instead of bouncing around
    sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs * steps_per_epoch)
    meter = S.SavedMeter()
    saved_per_step = None
    start = time.perf_counter()
    for epoch in range(args.epochs):
        order = rng.permutation(n)
        bar = _progress(range(steps_per_epoch), steps_per_epoch, f"epoch {epoch + 1}",
                        args.no_progress or say is _silent)
        t0, seen, total_loss = time.perf_counter(), 0, 0.0
        for step in bar:
            idx = order[step * args.batch_size:(step + 1) * args.batch_size]
            weight = 1.0
            if dp is not None:
                idx, weight = dp.shard(idx)
            xb, yb = lib.from_numpy(x_train[idx]), lib.from_numpy(y_train[idx])
            meter.reset()
            with S.saving(lib, args.saved_tensors, meter):
                loss = lib.nn.functional.cross_entropy(model(xb), yb)
                if weight != 1.0:
                    loss = loss * weight
            if args.saved_tensors == "checkpoint":
                meter.bytes += S.checkpoint_input_bytes(xb)  # block 1's input
                meter.bytes += len(idx) * 32 * 4 * 4 * xb.element_size()  # block 2's input
            if saved_per_step is None:
                saved_per_step = meter.bytes
                if args.graph:
                    from retrograd.train.graph_export import write_graph

                    for path in write_graph(loss, args.graph):
                        print(f"wrote {path}")
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            seen += len(idx)
            total_loss += loss.item() / weight * len(idx) if weight else 0.0
            if hasattr(bar, "set_postfix"):
                bar.set_postfix(loss=f"{loss.item():.4f}",
                                throughput=f"{seen / (time.perf_counter() - t0):.0f} img/s")
        if args.no_progress or not hasattr(bar, "set_postfix"):
            say(f"epoch {epoch + 1}: loss {total_loss / seen:.4f}, "
                  f"{seen / (time.perf_counter() - t0):.0f} img/s")
        else:
            say(f"epoch {epoch + 1:2d}  loss {total_loss / seen:.4f}  "
                  f"{seen / (time.perf_counter() - t0):.0f} img/s")
    wall = time.perf_counter() - start
    acc = evaluate(lib, model, x_test, y_test)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"backend": args.backend, "saved_tensors": args.saved_tensors,
              "test_accuracy": acc, "wall_seconds": wall, "peak_rss_mb": peak_mb,
              "saved_activation_bytes": saved_per_step or 0}
    say(f"test accuracy {acc * 100:.2f}%  ({len(y_test)} held-out images)")
    say(f"wall time {wall:.1f}s  peak memory {peak_mb:.0f} MB (RSS)")
    say(f"saved activations per step ({args.saved_tensors}): "
          f"{(saved_per_step or 0) / 1024:.1f} KiB")
    if eager_model is not None:
        result["compile_speedup"] = _speedup(lib, eager_model, model, x_train[:args.batch_size],
                                             y_train[:args.batch_size])
        print(f"compiled step: {result['compile_speedup']:.2f}x eager's speed "
              "(forward and backward, best of 5 rounds, timed in alternation)")
    if dp is not None:
        from retrograd.train.data_parallel import print_report

        result["ranks"] = dp.report(wall)
        result["nproc_per_node"] = dp.world
        if dp.is_main:
            print_report(result["ranks"])
        dp.close()
    return result


def _silent(*args: Any, **kwargs: Any) -> None:
    """print on ranks other than 0: they train but do not report."""


def _speedup(lib: Any, eager: Any, compiled: Any, x: np.ndarray, y: np.ndarray) -> float:
    """Eager step time over compiled step time on one batch (same weights at the start)."""
    eager.load_state_dict(compiled.state_dict())
    xb, yb = lib.from_numpy(x), lib.from_numpy(y)

    def step(m: Any) -> None:
        m.zero_grad()
        lib.nn.functional.cross_entropy(m(xb), yb).backward()

    best = {"eager": float("inf"), "compiled": float("inf")}
    step(eager)
    step(compiled)
    for _ in range(5):
        for name, m in (("eager", eager), ("compiled", compiled)):
            t0 = time.perf_counter()
            for _ in range(5):
                step(m)
            best[name] = min(best[name], time.perf_counter() - t0)
    return best["eager"] / best["compiled"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    from retrograd.train import data_parallel

    if args.nproc_per_node > 1 and not data_parallel.is_worker():
        return data_parallel.launch(args.nproc_per_node, argv)
    train(args)
    return 0
