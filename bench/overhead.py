"""Per-op overhead and training-step cost: retrograd vs hand-written NumPy vs torch, one run.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/overhead.py

(a) a 300-op elementwise chain (mul, add, tanh in turn) on 16-element float32 tensors, forward
    and backward, time per op;
(b) one MLP training step: batch 128, 784-1024-1024-10, ReLU, cross-entropy, SGD;
(c) forward and backward of a pre-LayerNorm transformer block (batch 8, sequence 64, d_model 128,
    4 heads, MLP 512);
(d) the step of (b) on a tiny MLP (8-16-16-10, batch 4), where NumPy's work is negligible: the
    fixed Python cost of a step (about 50 ops, 20 backward nodes, 6 optimizer updates).
Hand-written NumPy computes forward and backward by hand: the floor for any NumPy-backed engine.
"""

from __future__ import annotations

import argparse

import numpy as np

try:
    from bench._timing import best_of_each
except ImportError:  # run as a script from bench/
    from _timing import best_of_each

import retrograd

try:
    import torch
except ImportError:
    torch = None


# --- (a) elementwise chain --------------------------------------------------------------------
CHAIN_STEPS = 100  # x 3 ops


def chain_lib(lib, x0: np.ndarray, w0: np.ndarray):
    x = lib.tensor(x0, requires_grad=True)
    w = lib.tensor(w0, requires_grad=True)

    def run():
        y = x
        for _ in range(CHAIN_STEPS):
            y = y * w
            y = y + w
            y = y.tanh()
        y.sum().backward()
        x.grad = None
        w.grad = None

    return run


def chain_numpy(x0: np.ndarray, w0: np.ndarray):
    def run():
        y = x0
        saved = []
        for _ in range(CHAIN_STEPS):
            saved.append(y)
            y = np.tanh(y * w0 + w0)
            saved.append(y)
        g = np.ones_like(y)
        gw = np.zeros_like(w0)
        for i in range(CHAIN_STEPS - 1, -1, -1):
            t = saved[2 * i + 1]
            g = g * (1 - t * t)      # tanh
            gw += g                  # add
            gw += g * saved[2 * i]   # mul (w's share)
            g = g * w0               # mul (y's share)
        return g, gw

    return run


def bench_chain(repeat: int, libs: tuple = ("retrograd", "numpy", "torch")) -> dict:
    rng = np.random.default_rng(0)
    x0 = rng.random(16, dtype=np.float32)
    w0 = rng.random(16, dtype=np.float32)
    ops = CHAIN_STEPS * 3
    fns = {"retrograd": chain_lib(retrograd, x0, w0), "numpy": chain_numpy(x0, w0)}
    if torch is not None:
        fns["torch"] = chain_lib(torch, x0, w0)
    return {k: v / ops for k, v in
            best_of_each({k: f for k, f in fns.items() if k in libs}, repeat, 20).items()}


# --- (b) MLP training step --------------------------------------------------------------------
SIZES = (784, 1024, 1024, 10)
BATCH = 128


def mlp_params(seed: int = 0, sizes: tuple = SIZES) -> list:
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return params


def mlp_lib(lib, x0, y0, sizes=SIZES, lr=0.01):
    F = lib.nn.functional
    params = [lib.tensor(p, requires_grad=True) for p in mlp_params(sizes=sizes)]
    x, y = lib.from_numpy(x0), lib.from_numpy(y0)

    def run():
        h = x
        for i in range(0, len(params) - 2, 2):
            h = F.relu(F.linear(h, params[i], params[i + 1]))
        loss = F.cross_entropy(F.linear(h, params[-2], params[-1]), y)
        for p in params:
            p.grad = None
        loss.backward()
        with lib.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=lr)

    return run


def mlp_numpy(x0, y0, lr=0.01, sizes=SIZES):
    params = mlp_params(sizes=sizes)

    def run():
        acts, h = [x0], x0
        n_layers = len(params) // 2
        for i in range(n_layers):
            h = h @ params[2 * i].T + params[2 * i + 1]
            if i < n_layers - 1:
                h = np.maximum(h, 0)
            acts.append(h)
        m = h.max(1, keepdims=True)
        e = np.exp(h - m)
        p = e / e.sum(1, keepdims=True)
        g = p
        g[np.arange(len(y0)), y0] -= 1
        g /= len(y0)
        for i in range(n_layers - 1, -1, -1):
            w = params[2 * i]
            a = acts[i]
            gw = g.T @ a
            gb = g.sum(0)
            if i > 0:
                g = (g @ w) * (acts[i] > 0)
            params[2 * i] -= lr * gw
            params[2 * i + 1] -= lr * gb

    return run


def bench_mlp(repeat: int, libs: tuple = ("retrograd", "numpy", "torch"),
              sizes: tuple = SIZES, batch: int = BATCH, number: int = 3) -> dict:
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y0 = rng.integers(0, sizes[-1], batch)
    fns = {"retrograd": mlp_lib(retrograd, x0, y0, sizes),
           "numpy": mlp_numpy(x0, y0, sizes=sizes)}
    if torch is not None:
        fns["torch"] = mlp_lib(torch, x0, y0, sizes)
    return best_of_each({k: f for k, f in fns.items() if k in libs}, repeat, number)


TINY = (8, 16, 16, 10)


def bench_tiny_mlp(repeat: int, libs: tuple = ("retrograd", "numpy", "torch")) -> dict:
    return bench_mlp(repeat, libs, TINY, 4, 200)


# --- (c) transformer block --------------------------------------------------------------------
B, T, D, H, FF = 8, 64, 128, 4, 512


def block_params(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)

    return {"ln1_w": np.ones(D, np.float32), "ln1_b": np.zeros(D, np.float32),
            "qkv": w(3 * D, D), "qkv_b": np.zeros(3 * D, np.float32),
            "proj": w(D, D), "proj_b": np.zeros(D, np.float32),
            "ln2_w": np.ones(D, np.float32), "ln2_b": np.zeros(D, np.float32),
            "fc1": w(FF, D), "fc1_b": np.zeros(FF, np.float32),
            "fc2": w(D, FF), "fc2_b": np.zeros(D, np.float32)}


def block_lib(lib, x0):
    F = lib.nn.functional
    p = {k: lib.tensor(v, requires_grad=True) for k, v in block_params().items()}
    x = lib.tensor(x0, requires_grad=True)

    def run():
        h = F.layer_norm(x, (D,), p["ln1_w"], p["ln1_b"])
        q, k, v = F.linear(h, p["qkv"], p["qkv_b"]).split(D, dim=-1)
        q, k, v = (t.reshape(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / np.sqrt(D // H))
        a = F.softmax(att, dim=-1) @ v
        a = a.transpose(1, 2).reshape(B, T, D)
        h2 = x + F.linear(a, p["proj"], p["proj_b"])
        m = F.layer_norm(h2, (D,), p["ln2_w"], p["ln2_b"])
        out = h2 + F.linear(F.gelu(F.linear(m, p["fc1"], p["fc1_b"])), p["fc2"], p["fc2_b"])
        out.sum().backward()
        for t in list(p.values()) + [x]:
            t.grad = None

    return run


def bench_block(repeat: int, libs: tuple = ("retrograd", "torch")) -> dict:
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((B, T, D)).astype(np.float32)
    fns = {"retrograd": block_lib(retrograd, x0)}
    if torch is not None:
        fns["torch"] = block_lib(torch, x0)
    return best_of_each({k: f for k, f in fns.items() if k in libs}, repeat, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    # retrograd and NumPy are timed in alternation; torch runs last: its OpenMP workers keep
    # spinning after a torch op and would slow whatever runs next on this 2-core machine
    ours = ("retrograd", "numpy")
    a, b, c, d = (bench_chain(args.repeat, ours), bench_mlp(args.repeat, ours),
                  bench_block(args.repeat, ours), bench_tiny_mlp(args.repeat, ours))
    if torch is not None:
        a.update(bench_chain(args.repeat, ("torch",)))
        b.update(bench_mlp(args.repeat, ("torch",)))
        c.update(bench_block(args.repeat, ("torch",)))
        d.update(bench_tiny_mlp(args.repeat, ("torch",)))
    print("(a) elementwise chain, time per op, forward+backward")
    for k, v in a.items():
        print(f"    {k:10s} {v * 1e6:7.2f} us/op")
    if "torch" in a:
        print(f"    retrograd / torch = {a['retrograd'] / a['torch']:.2f}x, "
              f"retrograd / numpy = {a['retrograd'] / a['numpy']:.2f}x")
    print("(b) MLP training step (784-1024-1024-10, batch 128)")
    for k, v in b.items():
        print(f"    {k:10s} {v * 1e3:7.2f} ms")
    print(f"    retrograd / numpy = {b['retrograd'] / b['numpy']:.3f}x"
          + (f", retrograd / torch = {b['retrograd'] / b['torch']:.2f}x" if "torch" in b else ""))
    print("(c) pre-LN transformer block forward+backward (8x64x128, 4 heads, MLP 512)")
    for k, v in c.items():
        print(f"    {k:10s} {v * 1e3:7.2f} ms")
    if "torch" in c:
        print(f"    retrograd / torch = {c['retrograd'] / c['torch']:.2f}x")
    print("(d) the same step on a tiny MLP (8-16-16-10, batch 4): fixed cost per step")
    for k, v in d.items():
        print(f"    {k:10s} {v * 1e6:7.1f} us")
    if "torch" in d:
        print(f"    retrograd / torch = {d['retrograd'] / d['torch']:.2f}x")


if __name__ == "__main__":
    main()
