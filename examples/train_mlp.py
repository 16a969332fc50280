"""Train a small MLP on synthetic data with retrograd and print the loss falling.

    python examples/train_mlp.py [--steps 200] [--backend torch]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def make_data(n: int = 512, dim: int = 20, classes: int = 4, seed: int = 0):
    """Gaussian blobs: each class a cluster around its own centre."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 2.0, size=(classes, dim))
    labels = rng.integers(0, classes, size=n)
    x = centres[labels] + rng.normal(0, 1.0, size=(n, dim))
    return x.astype(np.float32), labels.astype(np.int64)


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--backend", choices=["retrograd", "torch"], default="retrograd")
    args = parser.parse_args(argv)
    if args.backend == "torch":
        import torch as lib
    else:
        import retrograd as lib
    F = lib.nn.functional

    x_np, y_np = make_data()
    x, y = lib.from_numpy(x_np), lib.from_numpy(y_np)
    rng = np.random.default_rng(1)

    def param(*shape):
        scale = 1.0 / np.sqrt(shape[-1])
        return lib.tensor(rng.uniform(-scale, scale, size=shape).astype(np.float32),
                          requires_grad=True)

    w1, b1 = param(64, 20), param(64)
    w2, b2 = param(4, 64), param(4)
    params = [w1, b1, w2, b2]
    start = time.perf_counter()
    loss_value = float("nan")
    for step in range(args.steps + 1):
        logits = F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)
        loss = F.cross_entropy(logits, y)
        for p in params:
            p.grad = None
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= args.lr * p.grad
        loss_value = loss.item()
        if step % 20 == 0:
            acc = (logits.argmax(1) == y).float().mean().item()
            print(f"step {step:4d}  loss {loss_value:.4f}  accuracy {acc:.3f}")
    print(f"{args.backend}: {args.steps} steps in {time.perf_counter() - start:.2f}s")
    return loss_value


if __name__ == "__main__":
    main()
