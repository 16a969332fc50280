"""retrograd.func: per-sample gradients by vmap(grad), jacrev against a loop of backward calls,
forward-mode JVP against the plain forward pass.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c 0 python bench/func.py

(a) per-sample gradients of an MLP (64 -> 128 -> 10, cross-entropy) at batch 64: vmap(grad)
    against a loop of 64 autograd.grad calls, and against torch.func on the same model;
(b) the Jacobian of a 256 -> 256 -> 256 tanh MLP: jacrev against autograd.functional.jacobian
    without vectorize (one backward per output);
(c) jvp of a chain of 40 element-wise ops on 4096 floats against the chain's forward pass,
    eager and under retrograd.compile (the jvp captured into one graph of NumPy calls), beside
    the same ratio for the chain written directly in NumPy (the floor) and torch.func.jvp's.
Times are CPU time (time.process_time), best of several repeats, contenders in alternation.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import retrograd
import retrograd.nn.functional as F
from retrograd.func import jacrev, jvp


def best_cpu(fns: dict, repeat: int = 7, number: int = 3) -> dict:
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.process_time()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.process_time() - t0) / number)
    return best


def _mlp(lib, sizes: tuple, seed: int = 0):
    rs = np.random.RandomState(seed)
    layers: list = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(lib.nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    model = lib.nn.Sequential(*layers)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor((rs.randn(*p.shape) * 0.1).astype(np.float32)))
    return model


def per_sample(lib, batch: int = 64) -> dict[str, Callable[[], object]]:
    model = _mlp(lib, (64, 128, 10))
    rs = np.random.RandomState(1)
    x = lib.tensor(rs.randn(batch, 64).astype(np.float32))
    y = lib.tensor(rs.randint(0, 10, batch))
    params = {k: v.detach() for k, v in model.named_parameters()}
    func = lib.func

    def loss(p, xi, yi):
        out = func.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    per_sample_grads = func.vmap(func.grad(loss), in_dims=(None, 0, 0))

    def vectorized():
        return per_sample_grads(params, x, y)

    ps = list(model.parameters())

    def loop():
        out = []
        for i in range(batch):
            li = lib.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1])
            out.append(lib.autograd.grad(li, ps))
        return out

    return {"vmap": vectorized, "loop": loop}


def check_per_sample() -> None:
    import torch

    a = per_sample(retrograd)["vmap"]()
    b = per_sample(torch)["vmap"]()
    for k in a:
        assert np.allclose(a[k].numpy(), b[k].numpy(), atol=1e-5), k


def jacobians() -> dict[str, Callable[[], object]]:
    model = _mlp(retrograd, (256, 256, 256))
    x = retrograd.tensor(np.random.RandomState(2).randn(256).astype(np.float32))

    def f(v):
        return F.tanh(model(v))

    return {"jacrev": lambda: jacrev(f)(x),
            "functional.jacobian": lambda: retrograd.autograd.functional.jacobian(f, x)}


def chain() -> dict[str, Callable[[], object]]:
    x = retrograd.tensor(np.random.RandomState(3).randn(4096).astype(np.float32))
    v = retrograd.ones(4096)

    def f(a):
        for _ in range(10):
            a = (a.sin() * 0.9 + 0.1).tanh()
        return a

    compiled_jvp = retrograd.compile(lambda x, v: jvp(f, (x,), (v,)), fullgraph=True)
    compiled_forward = retrograd.compile(f, fullgraph=True)
    return {"forward": lambda: f(x), "jvp": lambda: jvp(f, (x,), (v,)),
            "compiled jvp": lambda: compiled_jvp(x, v),
            "compiled forward": lambda: compiled_forward(x)}


def chain_numpy() -> dict[str, Callable[[], object]]:
    """The chain and its tangent written directly in NumPy: the floor of (c). sin's tangent
    needs a cos and tanh's a square, so even here the JVP costs well over 1.5x the forward."""
    x = np.random.RandomState(3).randn(4096).astype(np.float32)
    v = np.ones(4096, np.float32)
    s9, s1, one = np.float32(0.9), np.float32(0.1), np.float32(1)

    def forward(a):
        for _ in range(10):
            a = np.tanh(np.sin(a) * s9 + s1)
        return a

    def jvp_np(a, t):
        for _ in range(10):
            t = np.cos(a) * t * s9
            a = np.tanh(np.sin(a) * s9 + s1)
            t = (one - a * a) * t
        return a, t

    return {"forward": lambda: forward(x), "jvp": lambda: jvp_np(x, v)}


def chain_torch(torch) -> dict[str, Callable[[], object]]:
    """The same chain on torch: its forward pass and torch.func.jvp, for scale."""
    x = torch.tensor(np.random.RandomState(3).randn(4096).astype(np.float32))
    v = torch.ones(4096)

    def f(a):
        for _ in range(10):
            a = (a.sin() * 0.9 + 0.1).tanh()
        return a

    return {"forward": lambda: f(x), "jvp": lambda: torch.func.jvp(f, (x,), (v,))}


def main() -> None:
    import torch

    # one intra-op thread, as the run is pinned to one core: torch's idle pool threads would
    # otherwise spin on that core and be counted in the process CPU time of everything after
    torch.set_num_threads(1)

    check_per_sample()
    ours = per_sample(retrograd)
    theirs = per_sample(torch)
    t = best_cpu({"vmap(grad)": ours["vmap"], "loop": ours["loop"],
                  "torch.func": theirs["vmap"]})
    print(f"(a) per-sample grads, batch 64: vmap(grad) {t['vmap(grad)'] * 1e3:.2f} ms, "
          f"loop of backward calls {t['loop'] * 1e3:.2f} ms "
          f"({t['loop'] / t['vmap(grad)']:.1f}x faster), torch.func "
          f"{t['torch.func'] * 1e3:.2f} ms ({t['vmap(grad)'] / t['torch.func']:.2f}x torch)")
    j = jacobians()
    a, b = j["jacrev"](), j["functional.jacobian"]()
    assert np.allclose(a.numpy(), b.numpy(), atol=1e-5)
    t = best_cpu(j, repeat=3, number=1)
    print(f"(b) 256x256 Jacobian: jacrev {t['jacrev'] * 1e3:.2f} ms, functional.jacobian "
          f"{t['functional.jacobian'] * 1e3:.2f} ms "
          f"({t['functional.jacobian'] / t['jacrev']:.1f}x faster)")
    c, n = chain(), chain_numpy()
    for a, b in zip(c["jvp"](), c["compiled jvp"]()):
        assert np.array_equal(a.numpy(), b.numpy())  # the compiled jvp is eager's, bit for bit
    tc = chain_torch(torch)
    t = best_cpu({**c, "np forward": n["forward"], "np jvp": n["jvp"],
                  "torch forward": tc["forward"], "torch jvp": tc["jvp"]}, number=10)
    print(f"(c) chain of 40 ops on 4096 floats: forward {t['forward'] * 1e3:.3f} ms, jvp "
          f"{t['jvp'] * 1e3:.3f} ms ({t['jvp'] / t['forward']:.2f}x the forward pass); "
          f"compiled jvp {t['compiled jvp'] * 1e3:.3f} ms ({t['compiled jvp'] / t['forward']:.2f}x "
          f"the forward pass, {t['compiled jvp'] / t['compiled forward']:.2f}x the compiled "
          f"forward pass); in plain NumPy {t['np jvp'] / t['np forward']:.2f}x; torch.func.jvp "
          f"{t['torch jvp'] * 1e3:.3f} ms ({t['torch jvp'] / t['torch forward']:.2f}x torch's "
          f"forward pass, {t['torch jvp'] / t['jvp']:.1f}x retrograd's eager jvp)")


if __name__ == "__main__":
    main()
